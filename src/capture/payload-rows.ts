/**
 * Request payload rows with their bodies as parts (body-parts.ts): what the capture writes and what
 * readers turn back into the row as it would have been stored whole.
 *
 * A run's payloads.jsonl holds, besides its request and response rows, part rows
 * `{"type":"part","hash":H,"text":T}`, each written once, before the first request row that names it.
 * A request row whose body is parted has, where `body` would be, `bodyHash` (SHA-256 of the whole
 * body, hex), `skeleton` (the texts between the parts) and `parts` (their hashes, in order). A short
 * body, one that is not a JSON object, or one with no long array elements, keeps `body` as before,
 * so a reader of an older run meets only rows it knows. The database keeps the same rows in
 * `payloads` and the parts in `parts` (sqlite.ts).
 */
import { bodyHash, cutBody, joinBody, partHash } from "./body-parts.js";

export interface StoredPart {
  hash: string;
  text: string;
}

/** A payload row's head as the capture writes it: its type (and seq), read without parsing the row. */
export const PART_HEAD = /^\{"type":"part","hash":"([A-Za-z0-9_-]+)"/;

/** The part row of payloads.jsonl, serialized. */
export function partLine(part: StoredPart): string {
  return JSON.stringify({ type: "part", hash: part.hash, text: part.text });
}

/**
 * Remembers which parts a run has stored, so each is written once. One per run's writer; it holds a
 * hash per part, never a part's text.
 */
export class PartedBodies {
  private readonly stored = new Set<string>();

  /**
   * The fields that stand for `body` in its request row, and the parts to write before that row (the
   * ones this run has not stored yet).
   */
  fields(body: string): { fields: Record<string, unknown>; newParts: StoredPart[] } {
    const cut = cutBody(body);
    if (!cut) return { fields: { body }, newParts: [] };
    const hashes = cut.parts.map(partHash);
    const newParts: StoredPart[] = [];
    hashes.forEach((hash, i) => {
      if (this.stored.has(hash)) return;
      this.stored.add(hash);
      newParts.push({ hash, text: cut.parts[i]! });
    });
    return { fields: { bodyHash: bodyHash(body), skeleton: cut.skeleton, parts: hashes }, newParts };
  }
}

/** A request row whose body is parted, as it is read back. */
interface PartedRow {
  bodyHash: string;
  skeleton: string[];
  parts: string[];
}

export function isPartedRow(row: object): row is PartedRow {
  const r = row as Partial<PartedRow>;
  return typeof r.bodyHash === "string" && Array.isArray(r.skeleton) && Array.isArray(r.parts);
}

/**
 * The row as it was before it was stored in parts: `body` where `bodyHash` stood, `skeleton` and
 * `parts` gone, the other fields in their order. A part the run lacks or a body whose hash differs
 * is `problem` (the caller names the file and line); a row stored whole is returned as it is.
 */
export function wholeRow<T extends object>(
  row: T,
  partText: (hash: string) => string | undefined,
  problem: (what: string) => Error,
): T {
  if (!isPartedRow(row)) return row;
  const texts = row.parts.map((hash) => {
    const text = partText(hash);
    if (text === undefined) throw problem(`part ${hash} of its body is not in the run`);
    return text;
  });
  const body = joinBody(row.skeleton, texts);
  if (bodyHash(body) !== row.bodyHash) throw problem("its body joined from its parts does not match its bodyHash");
  const whole: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(row)) {
    if (key === "bodyHash") whole.body = body;
    else if (key !== "skeleton" && key !== "parts") whole[key] = value;
  }
  return whole as T;
}
