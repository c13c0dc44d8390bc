/**
 * Request payload rows with their bodies as parts (body-parts.ts): what the capture writes and what
 * readers turn back into the row as it would have been stored whole.
 *
 * A run's payloads.jsonl holds, besides its request and response rows, part rows
 * `{"type":"part","hash":H,"text":T}`, each written once, before the first request row that names it.
 * A request row whose body is parted has, where `body` would be, `bodyHash` (SHA-256 of the whole
 * body, hex), `skeleton` (the texts between the parts) and `parts` (their hashes, in order); where
 * those lists are long, their beginning is cut into chunks (part-lists.ts), stored as parts too, and
 * the row names them in `chunks` before the rest of its lists. A short body, one that is not a JSON
 * object, or one with no long array elements, keeps `body` as before, so a reader of an older run
 * meets only rows it knows. The database keeps the same rows in `payloads` and the parts and chunks
 * in `parts` (sqlite.ts).
 */
import { bodyHash, cutBody, joinBody, partHash } from "./body-parts.js";
import { chunkLists, joinLists, type PartLists } from "./part-lists.js";

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
    const keep = (part: StoredPart) => {
      if (this.stored.has(part.hash)) return;
      this.stored.add(part.hash);
      newParts.push(part);
    };
    for (const [i, hash] of hashes.entries()) keep({ hash, text: cut.parts[i]! });
    const { chunks, tail } = chunkLists({ skeleton: cut.skeleton, parts: hashes });
    for (const chunk of chunks) keep(chunk);
    const listed = chunks.length > 0 ? { chunks: chunks.map((chunk) => chunk.hash), ...tail } : tail;
    return { fields: { bodyHash: bodyHash(body), ...listed }, newParts };
  }
}

/** A request row whose body is parted, as it is read back: `skeleton` and `parts` follow its `chunks`. */
interface PartedRow {
  bodyHash: string;
  chunks?: string[];
  skeleton: string[];
  parts: string[];
}

export function isPartedRow(row: object): row is PartedRow {
  const r = row as Partial<PartedRow>;
  return (
    typeof r.bodyHash === "string" &&
    Array.isArray(r.skeleton) &&
    Array.isArray(r.parts) &&
    (r.chunks === undefined || Array.isArray(r.chunks))
  );
}

/**
 * A parted row's whole lists: its chunks' (looked up as parts) and then its own. A chunk the run
 * lacks is `problem`.
 */
export function partedLists(
  row: PartedRow,
  partText: (hash: string) => string | undefined,
  problem: (what: string) => Error,
): PartLists {
  const own = { skeleton: row.skeleton, parts: row.parts };
  return row.chunks ? joinLists(row.chunks, own, partText, problem) : own;
}

/**
 * The row as it was before it was stored in parts: `body` where `bodyHash` stood, `chunks`,
 * `skeleton` and `parts` gone, the other fields in their order. A part the run lacks or a body whose hash differs
 * is `problem` (the caller names the file and line); a row stored whole is returned as it is.
 */
export function wholeRow<T extends object>(
  row: T,
  partText: (hash: string) => string | undefined,
  problem: (what: string) => Error,
): T {
  if (!isPartedRow(row)) return row;
  const lists = partedLists(row, partText, problem);
  const texts = lists.parts.map((hash) => {
    const text = partText(hash);
    if (text === undefined) throw problem(`part ${hash} of its body is not in the run`);
    return text;
  });
  const body = joinBody(lists.skeleton, texts);
  if (bodyHash(body) !== row.bodyHash) throw problem("its body joined from its parts does not match its bodyHash");
  const whole: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(row)) {
    if (key === "bodyHash") whole.body = body;
    else if (key !== "chunks" && key !== "skeleton" && key !== "parts") whole[key] = value;
  }
  return whole as T;
}
