/**
 * gpt-tokenizer's o200k_base ranks as a file the tokenizer reads without building anything: an
 * open-addressing hash table from each token's text to its rank, laid out as typed arrays over the
 * file's own bytes. gpt-tokenizer builds a `Map` of the 198,427 texts at every load, and lists the
 * array's keys to count them: 60–90 ms of CPU in every process or thread that counts a new text
 * (docs/performance.md, "A ninth look"). Reading this file is under 10 ms, and a lookup is as fast as
 * the Map's (it hashes the text once and compares it in place, as the Map does).
 *
 * The layout, little-endian: a header of four u32 (ranks, slots, bytes of the texts, bytes of the
 * JSON after them); the slots (i32: a text's rank + 1, 0 for none); each rank's text length in UTF-16
 * units (u8, 0 for a rank that is no text); the texts in rank order as UTF-8; and last the ranks that
 * are no text (byte strings that are not UTF-8) as JSON `[[rank, [byte, …]], …]`. 3.7 MB for
 * o200k_base.
 */

/** What the ranks array of gpt-tokenizer holds at each rank: the token's text, or its bytes. */
export type RankValue = string | number[];

/** A token's rank by its text, for gpt-tokenizer's `BytePairEncodingCore` (which asks a Map). */
export interface RankByText {
  get(text: string): number | undefined;
}

export interface RankTable {
  byText: RankByText;
  /** The ranks whose token is no text, at their rank; every other index a hole. */
  byteRanks: RankValue[];
}

const HEADER_WORDS = 4;
/** Slots per text, rounded up to a power of two: probes stay short (a load of about 0.4). */
const SLOTS_PER_TEXT = 2.5;
/** A text's length is kept in one byte; o200k_base's longest is 128 UTF-16 units. */
const MAX_TEXT_LENGTH = 255;

/** FNV-1a over the text's UTF-16 units: what places a text in the table, at build and at lookup. */
function hashOf(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return hash >>> 0;
}

/** The table's bytes for gpt-tokenizer's ranks array (scripts/bundle.mjs writes them at build). */
export function writeRankTable(ranks: readonly RankValue[]): Buffer {
  const lengths = new Uint8Array(ranks.length);
  const byteEntries: [number, number[]][] = [];
  let texts = 0;
  ranks.forEach((value, rank) => {
    if (typeof value !== "string") byteEntries.push([rank, value]);
    else if (value.length > MAX_TEXT_LENGTH) throw new Error(`rank ${rank}: a text longer than ${MAX_TEXT_LENGTH}`);
    else {
      lengths[rank] = value.length;
      texts++;
    }
  });
  let slotCount = 1;
  while (slotCount < texts * SLOTS_PER_TEXT) slotCount *= 2;
  const slots = new Int32Array(slotCount);
  ranks.forEach((value, rank) => {
    if (typeof value !== "string") return;
    let slot = hashOf(value) & (slotCount - 1);
    while (slots[slot] !== 0) slot = (slot + 1) & (slotCount - 1);
    slots[slot] = rank + 1;
  });
  const utf8 = Buffer.from(ranks.filter((value) => typeof value === "string").join(""));
  const json = Buffer.from(JSON.stringify(byteEntries));
  const header = new Uint32Array([ranks.length, slotCount, utf8.length, json.length]);
  return Buffer.concat([header, slots, lengths, utf8, json].map(bytesOf));
}

const bytesOf = (data: ArrayBufferView) => Buffer.from(data.buffer, data.byteOffset, data.byteLength);

/** The table in `file` (its bytes as `writeRankTable` wrote them), read in place. */
export function readRankTable(file: Buffer): RankTable {
  // The slots are read as i32 over the file's bytes, which needs them 4-aligned.
  const data = file.byteOffset % 4 === 0 ? file : Buffer.from(file);
  const [rankCount, slotCount, utf8Length, jsonLength] = new Uint32Array(data.buffer, data.byteOffset, HEADER_WORDS);
  let at = HEADER_WORDS * 4;
  const slots = new Int32Array(data.buffer, data.byteOffset + at, slotCount!);
  at += slotCount! * 4;
  const lengths = data.subarray(at, at + rankCount!);
  at += rankCount!;
  const units = data.toString("utf8", at, at + utf8Length!);
  at += utf8Length!;
  const byteEntries = JSON.parse(data.toString("utf8", at, at + jsonLength!)) as [number, number[]][];
  const offsets = new Uint32Array(rankCount! + 1);
  for (let rank = 0; rank < rankCount!; rank++) offsets[rank + 1] = offsets[rank]! + lengths[rank]!;
  if (offsets[rankCount!] !== units.length) throw new Error("the rank table's texts do not match their lengths");
  const byteRanks: RankValue[] = [];
  byteRanks.length = rankCount!;
  for (const [rank, bytes] of byteEntries) byteRanks[rank] = bytes;
  const mask = slotCount! - 1;
  const get = (text: string): number | undefined => {
    for (let slot = hashOf(text) & mask; ; slot = (slot + 1) & mask) {
      const entry = slots[slot]!;
      if (entry === 0) return undefined;
      const start = offsets[entry - 1]!;
      if (lengths[entry - 1] === text.length && units.startsWith(text, start)) return entry - 1;
    }
  };
  return { byText: { get }, byteRanks };
}
