/**
 * gpt-tokenizer's o200k_base ranks as a file the tokenizer reads without building anything: an
 * open-addressing hash table from each token's text to its rank, laid out as typed arrays over the
 * file's own bytes. gpt-tokenizer builds a `Map` of the 198,427 texts at every load, and lists the
 * array's keys to count them: 60–90 ms of CPU in every process or thread that counts a new text
 * (docs/performance.md, "A ninth look"). Reading this file is under 10 ms, and a lookup is as fast as
 * the Map's (it hashes the text once and compares it in place, as the Map does).
 *
 * The layout, little-endian: a header of five u32 (ranks, texts, slots, UTF-16 units of all texts,
 * bytes of the JSON after them); the slots (i32: a text's index + 1, 0 for none); the texts' offsets
 * into the UTF-16 units (u32, one more than texts); their ranks (i32); the units; and last the ranks
 * that are no text (byte strings that are not UTF-8) as JSON `[[rank, [byte, …]], …]`.
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

const HEADER_WORDS = 5;
/** Slots per text, rounded up to a power of two: probes stay short (a load of about 0.4). */
const SLOTS_PER_TEXT = 2.5;

/** FNV-1a over the text's UTF-16 units: what places a text in the table, at build and at lookup. */
function hashOf(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return hash >>> 0;
}

/** The table's bytes for gpt-tokenizer's ranks array (scripts/bundle.mjs writes them at build). */
export function writeRankTable(ranks: readonly RankValue[]): Buffer {
  const texts: string[] = [];
  const textRanks: number[] = [];
  const byteEntries: [number, number[]][] = [];
  ranks.forEach((value, rank) => {
    if (typeof value === "string") {
      texts.push(value);
      textRanks.push(rank);
    } else byteEntries.push([rank, value]);
  });
  let slotCount = 1;
  while (slotCount < texts.length * SLOTS_PER_TEXT) slotCount *= 2;
  const slots = new Int32Array(slotCount);
  const offsets = new Uint32Array(texts.length + 1);
  texts.forEach((text, i) => {
    offsets[i + 1] = offsets[i]! + text.length;
    let slot = hashOf(text) & (slotCount - 1);
    while (slots[slot] !== 0) slot = (slot + 1) & (slotCount - 1);
    slots[slot] = i + 1;
  });
  const units = Buffer.from(texts.join(""), "utf16le");
  const bytesJson = Buffer.from(JSON.stringify(byteEntries));
  const header = new Uint32Array([ranks.length, texts.length, slotCount, units.length / 2, bytesJson.length]);
  return Buffer.concat([header, slots, offsets, Int32Array.from(textRanks), units, bytesJson].map(bytesOf));
}

const bytesOf = (data: ArrayBufferView) => Buffer.from(data.buffer, data.byteOffset, data.byteLength);

/** The table in `file` (its bytes as `writeRankTable` wrote them), read in place. */
export function readRankTable(file: Buffer): RankTable {
  // Typed arrays over the file need its bytes 4-aligned; a large file read whole starts its own buffer.
  const data = file.byteOffset % 4 === 0 ? file : Buffer.from(file);
  const words = (at: number, length: number) => new Int32Array(data.buffer, data.byteOffset + at, length);
  const [rankCount, textCount, slotCount, unitCount, jsonLength] = new Uint32Array(
    data.buffer,
    data.byteOffset,
    HEADER_WORDS,
  );
  let at = HEADER_WORDS * 4;
  const slots = words(at, slotCount!);
  at += slotCount! * 4;
  const offsets = new Uint32Array(data.buffer, data.byteOffset + at, textCount! + 1);
  at += (textCount! + 1) * 4;
  const textRanks = words(at, textCount!);
  at += textCount! * 4;
  const units = data.toString("utf16le", at, at + unitCount! * 2);
  at += unitCount! * 2;
  const byteEntries = JSON.parse(data.toString("utf8", at, at + jsonLength!)) as [number, number[]][];
  const byteRanks: RankValue[] = [];
  byteRanks.length = rankCount!;
  for (const [rank, bytes] of byteEntries) byteRanks[rank] = bytes;
  const mask = slotCount! - 1;
  const get = (text: string): number | undefined => {
    for (let slot = hashOf(text) & mask; ; slot = (slot + 1) & mask) {
      const entry = slots[slot]!;
      if (entry === 0) return undefined;
      const start = offsets[entry - 1]!;
      if (offsets[entry]! - start === text.length && units.startsWith(text, start)) return textRanks[entry - 1];
    }
  };
  return { byText: { get }, byteRanks };
}
