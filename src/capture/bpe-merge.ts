/**
 * Byte-pair merging in O(n log n), token for token what gpt-tokenizer 4.0.0 computes.
 *
 * gpt-tokenizer's `BytePairEncodingCore.bytePairMerge` looks through every pair's rank for each merge
 * it makes, O(n²) in the length of a pre-tokenized piece: a base64 image of one colour is a piece of
 * hundreds of thousands of `A`s, 400,000 of which took 224 s. The rule is the same here — merge the
 * adjacent pair of lowest rank, the leftmost of equal ranks, until no pair has a rank — but the
 * pairs wait in a min-heap ordered by (rank, start), over a linked list of parts. A merge changes the
 * pairs on both sides of the merged part only; their heap entries from before the merge are dropped
 * when they come up (their part is gone or its rank changed), not searched for.
 */

/** What the merge reads from gpt-tokenizer's `BytePairEncodingCore`: the rank of a byte string. */
export interface RankLookup {
  getBpeRankFromBytes(bytes: Uint8Array): number | undefined;
  getBpeRankFromBytesOrThrow(bytes: Uint8Array): number;
  getBpeRankFromString(text: string): number | undefined;
}

/** Heap keys pack (rank, start) into one double: ranks are below 2^21 and starts below 2^32. */
const START_SPAN = 2 ** 32;
/** Pair memo keys pack (left token, right token): o200k_base's tokens are below 2^18. */
const TOKEN_SPAN = 2 ** 18;

/** The token ranks of one piece's UTF-8 bytes, as gpt-tokenizer's `bytePairMerge(piece)` returns them. */
export function mergeBytePairs(piece: Uint8Array, ranks: RankLookup): number[] {
  const n = piece.length;
  // A part is named by its first byte's offset; `next[a]` is where the part after it starts (n: none).
  const next = new Int32Array(n);
  const prev = new Int32Array(n);
  // Every part is a token (a byte, or a pair whose rank was found); -1 for a byte without one.
  const token = new Int32Array(n);
  // The rank of the pair that part `a` starts; -1 when it has none (or `a` was merged away).
  const pairRank = new Int32Array(n);
  for (let a = 0; a < n; a++) {
    next[a] = a + 1;
    prev[a] = a - 1;
    token[a] = rankOfBytes(piece, a, a + 1, ranks) ?? -1;
  }
  const pairRanks = new PairRanks(piece, ranks, token);
  const heap = new MinHeap(3 * n);
  const rankPairAt = (a: number): void => {
    const rank = next[a]! < n ? pairRanks.rank(a, next[a]!, next[next[a]!]!) : -1;
    pairRank[a] = rank;
    if (rank >= 0) heap.push(rank * START_SPAN + a);
  };
  for (let a = 0; a < n; a++) rankPairAt(a);

  while (heap.size > 0) {
    const key = heap.pop();
    const a = key % START_SPAN;
    if (pairRank[a] !== (key - a) / START_SPAN) continue; // stale: the pair at `a` changed since
    const gone = next[a]!;
    next[a] = next[gone]!;
    if (next[a]! < n) prev[next[a]!] = a;
    pairRank[gone] = -1;
    token[a] = pairRank[a]!;
    rankPairAt(a);
    if (prev[a]! >= 0) rankPairAt(prev[a]!);
  }

  const tokens: number[] = [];
  for (let a = 0; a < n; a = next[a]!)
    tokens.push(token[a]! >= 0 ? token[a]! : ranks.getBpeRankFromBytesOrThrow(piece.subarray(a, next[a])));
  return tokens;
}

/**
 * The rank of two adjacent parts joined, or -1. Two parts' bytes are those of their tokens, so the
 * rank is a function of the two tokens, remembered for the piece: a long run of one character
 * holds only a few distinct pairs, and looking bytes up costs far more than a Map of numbers.
 */
class PairRanks {
  private readonly known = new Map<number, number>();

  constructor(
    private readonly piece: Uint8Array,
    private readonly ranks: RankLookup,
    private readonly token: Int32Array,
  ) {}

  rank(left: number, right: number, end: number): number {
    const leftToken = this.token[left]!;
    const rightToken = this.token[right]!;
    if (leftToken < 0 || rightToken < 0) return rankOfBytes(this.piece, left, end, this.ranks) ?? -1;
    const key = leftToken * TOKEN_SPAN + rightToken;
    let rank = this.known.get(key);
    if (rank === undefined) {
      rank = rankOfBytes(this.piece, left, end, this.ranks) ?? -1;
      this.known.set(key, rank);
    }
    return rank;
  }
}

/**
 * `getBpeRankFromBytes` of `piece[start, end)`. That function decodes the bytes with a TextDecoder
 * when they are valid UTF-8, about a microsecond each time; ASCII bytes decode to the string of their
 * char codes, which is built here directly and looked up in the same table.
 */
function rankOfBytes(piece: Uint8Array, start: number, end: number, ranks: RankLookup): number | undefined {
  let text = "";
  for (let i = start; i < end; i++) {
    const byte = piece[i]!;
    if (byte >= 0x80) return ranks.getBpeRankFromBytes(piece.subarray(start, end));
    text += String.fromCharCode(byte);
  }
  return ranks.getBpeRankFromString(text);
}

/** A binary min-heap of numbers in a fixed array: a piece of n bytes pushes at most 3n keys. */
class MinHeap {
  private readonly items: Float64Array;
  size = 0;

  constructor(capacity: number) {
    this.items = new Float64Array(capacity);
  }

  push(value: number): void {
    const items = this.items;
    let i = this.size++;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (items[parent]! <= value) break;
      items[i] = items[parent]!;
      i = parent;
    }
    items[i] = value;
  }

  pop(): number {
    const items = this.items;
    const top = items[0]!;
    const last = items[--this.size]!;
    let i = 0;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= this.size) break;
      if (child + 1 < this.size && items[child + 1]! < items[child]!) child++;
      if (items[child]! >= last) break;
      items[i] = items[child]!;
      i = child;
    }
    items[i] = last;
    return top;
  }
}

/** The parts of gpt-tokenizer's `BytePairEncodingCore` instance that the faster merge takes over. */
export interface BytePairCore extends RankLookup {
  textEncoder: { encode(text: string): Uint8Array };
  bytePairEncode(piece: string): number[];
}

/**
 * Pieces from this many UTF-16 units on are merged here; shorter ones (nearly every piece of
 * ordinary text) keep gpt-tokenizer's own path, which is faster for them and has its merge cache.
 */
export const LONG_PIECE = 64;

/**
 * The longest piece merged whole, in UTF-16 units. The merge holds 40 bytes of state per byte of a
 * piece (its links, tokens, ranks and heap), so a 20 MB run of one letter would take 800 MB; past this
 * length a piece is merged in pieces of this length, which bounds the state at about 40 MiB (more for
 * characters of several UTF-8 bytes) whatever a body holds. No merge then crosses a cut: the count of
 * such a piece may differ from the exact one by about one token per cut, one in a million characters.
 */
const MAX_WHOLE_PIECE = 1 << 20;

/**
 * Routes the long pieces of one gpt-tokenizer encoding to `mergeBytePairs`. Pieces are the unit
 * gpt-tokenizer merges and caches, so taking them over at its `bytePairEncode` changes nothing
 * else it does; the long ones skip its merge cache, which V8 hashes by length alone past 16,383
 * characters, so that pieces of one length would all be compared with one another.
 */
export function mergeLongPiecesFast(core: BytePairCore, maxWholePiece = MAX_WHOLE_PIECE): void {
  const libraryEncode = core.bytePairEncode.bind(core);
  const merge = (piece: string) => mergeBytePairs(core.textEncoder.encode(piece), core);
  core.bytePairEncode = (piece) => {
    if (piece.length < LONG_PIECE) return libraryEncode(piece);
    if (piece.length <= maxWholePiece) return merge(piece);
    const tokens: number[] = [];
    for (const cut of cutsOf(piece, maxWholePiece)) for (const token of merge(cut)) tokens.push(token);
    return tokens;
  };
}

/** `text` in parts of at most `length` UTF-16 units, never between the two halves of a surrogate pair. */
function* cutsOf(text: string, length: number): Generator<string> {
  for (let start = 0; start < text.length; ) {
    let end = Math.min(start + length, text.length);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end--;
    yield text.slice(start, end);
    start = end;
  }
}
