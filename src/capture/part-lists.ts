/**
 * A parted body's lists (the texts between its parts and the parts' hashes) cut into chunks, so a
 * request row does not list its whole conversation again.
 *
 * Request 600 of a session repeats the 3,000 parts of request 599 and adds a few: its row listing
 * every hash and every text between them made the lists grow with the square of the session (84 of
 * 95 MB of a 1,792-request session's payloads.jsonl). So the list of (text before part, part hash)
 * entries is cut at boundaries its content chooses: after an entry whose part hash begins with `A`
 * (its first six bits zero, one entry in 64), or after CHUNK_MAX_ENTRIES entries since the last cut.
 * A boundary depends only on the entries up to it, so two bodies that begin with the same entries
 * cut them into the same chunks, and a conversation that grows at its end keeps its earlier chunks.
 * Each chunk is stored once per run as a part (its text is the chunk's JSON, its hash that text's),
 * and the row keeps the chunks' hashes and the entries after the last boundary. Reading is
 * stateless: a row's lists are its chunks' lists, looked up by hash, then its own.
 */
import { partHash } from "./body-parts.js";

/** A cut forced after this many entries: a chunk's text stays a few kilobytes whatever the hashes. */
export const CHUNK_MAX_ENTRIES = 256;

/**
 * A parted body's lists: one more text than parts (the text after the last part). A chunk's text is
 * such lists as JSON, as many texts as parts (each the text before its part).
 */
export interface PartLists {
  skeleton: string[];
  parts: string[];
}

/** The lists cut into chunks (each a part: hash and text) and what follows the last one. */
export interface ChunkedLists {
  chunks: { hash: string; text: string }[];
  tail: PartLists;
}

const isBoundary = (hash: string) => hash.charCodeAt(0) === 0x41; // "A": the hash's first six bits are zero

export function chunkLists(lists: PartLists): ChunkedLists {
  const chunks: ChunkedLists["chunks"] = [];
  let from = 0;
  for (let i = 0; i < lists.parts.length; i++) {
    if (!isBoundary(lists.parts[i]!) && i + 1 - from < CHUNK_MAX_ENTRIES) continue;
    const chunk: PartLists = { skeleton: lists.skeleton.slice(from, i + 1), parts: lists.parts.slice(from, i + 1) };
    const text = JSON.stringify(chunk);
    chunks.push({ hash: partHash(text), text });
    from = i + 1;
  }
  return { chunks, tail: { skeleton: lists.skeleton.slice(from), parts: lists.parts.slice(from) } };
}

/**
 * The whole lists of a row that names `chunks` before its own `tail`; a chunk the run lacks, or whose
 * text is not a chunk, is `problem` (the caller names file and line).
 */
export function joinLists(
  chunks: readonly string[],
  tail: PartLists,
  chunkText: (hash: string) => string | undefined,
  problem: (what: string) => Error,
): PartLists {
  const skeleton: string[] = [];
  const parts: string[] = [];
  for (const hash of chunks) {
    const text = chunkText(hash);
    if (text === undefined) throw problem(`chunk ${hash} of its part list is not in the run`);
    const chunk = parseChunk(text);
    if (!chunk) throw problem(`chunk ${hash} of its part list is not a chunk`);
    skeleton.push(...chunk.skeleton);
    parts.push(...chunk.parts);
  }
  skeleton.push(...tail.skeleton);
  parts.push(...tail.parts);
  return { skeleton, parts };
}

function parseChunk(text: string): PartLists | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  const chunk = value as Partial<PartLists> | null;
  const strings = (list: unknown): list is string[] =>
    Array.isArray(list) && list.every((item) => typeof item === "string");
  return strings(chunk?.skeleton) && strings(chunk.parts) && chunk.skeleton.length === chunk.parts.length
    ? (chunk as PartLists)
    : null;
}
