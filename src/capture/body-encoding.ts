import { constants, createBrotliDecompress, createGunzip, createInflate, createInflateRaw } from "node:zlib";
import { Decompress as ZstdDecompress } from "fzstd";

/**
 * A body that crossed the wire with a `content-encoding`: the coding as sent, the bytes on the wire,
 * why it could not be decoded (then the capture stores no text for it), or why only its beginning is
 * stored (it decodes to more than the capture takes of a body that size: `decodedLimit`).
 */
export interface BodyEncoding {
  contentEncoding: string;
  wireBytes: number;
  undecodable?: string;
  truncated?: string;
}

/** What a body's wire bytes are as text: the text, and how it was encoded (absent when it was not). */
export interface DecodedBody {
  text: string;
  encoding?: BodyEncoding;
}

/**
 * The largest decoded body the capture takes (a run's default limit of request plus response bytes):
 * a string of V8's maximum length cannot be stored.
 */
export const DECODED_BODY_LIMIT = 256 * 1024 * 1024;
/**
 * How many times its wire size a compressed body may decode to. Real bodies stay far below: JSON and
 * event streams of real replies compress 5 to 40 times; a few kilobytes of gzip can claim gigabytes
 * (a gzip block expands at most about 1,000 times, brotli and zstd without bound).
 */
export const DECODED_RATIO_LIMIT = 100;
/** A body may decode to this much whatever its ratio: a small reply full of repeats stays whole. */
export const DECODED_FLOOR = 8 * 1024 * 1024;

/** The most text the capture decodes from a compressed body of `wireBytes` bytes. */
export function decodedLimit(wireBytes: number): number {
  return Math.min(DECODED_BODY_LIMIT, Math.max(DECODED_FLOOR, wireBytes * DECODED_RATIO_LIMIT));
}

/** What one coding's decoder gave: at most `limit` bytes, and whether there was more. */
interface Decoded {
  bytes: Uint8Array;
  cut: boolean;
}

/** Collects a decoder's output up to `limit` bytes; `keep` answers false once the limit is reached. */
class Collector {
  private readonly parts: Uint8Array[] = [];
  private total = 0;
  cut = false;
  constructor(private readonly limit: number) {}

  keep(part: Uint8Array): boolean {
    const room = this.limit - this.total;
    if (part.length > room) {
      this.parts.push(part.subarray(0, room));
      this.total = this.limit;
      this.cut = true;
      return false;
    }
    this.parts.push(part);
    this.total += part.length;
    return true;
  }

  result(): Decoded {
    return { bytes: Buffer.concat(this.parts), cut: this.cut };
  }
}

/**
 * A zlib or brotli decoder run as a stream, so the limit holds while it decodes: the stream is
 * destroyed the moment its output passes the limit, and it never holds more than a chunk beyond it
 * (zlib's sync functions only fail past their maxOutputLength, leaving nothing to store).
 */
function streamed(decoder: NodeJS.ReadWriteStream & { destroy(): void }, bytes: Uint8Array, limit: number) {
  const collector = new Collector(limit);
  return new Promise<Decoded>((resolve, reject) => {
    decoder.on("data", (part: Buffer) => {
      if (collector.cut || collector.keep(part)) return;
      decoder.destroy();
      resolve(collector.result());
    });
    decoder.on("end", () => resolve(collector.result()));
    decoder.on("error", reject);
    decoder.end(bytes);
  });
}

/** Undoes one coding; `cutShort` decodes a body that ended early as far as it goes instead of failing. */
type Decoder = (bytes: Uint8Array, cutShort: boolean, limit: number) => Promise<Decoded>;

const zlibOptions = (cutShort: boolean) => (cutShort ? { finishFlush: constants.Z_SYNC_FLUSH } : {});

/**
 * `deflate` is the zlib format (RFC 9110 §8.4.1.2), but servers have long sent raw deflate for it,
 * and clients accept both; a zlib header is two bytes whose big-endian value is a multiple of 31 with method 8.
 */
const inflateEither: Decoder = (bytes, cutShort, limit) => {
  const zlibHeader = bytes.length >= 2 && (bytes[0]! & 0x0f) === 8 && ((bytes[0]! << 8) | bytes[1]!) % 31 === 0;
  const decoder = zlibHeader ? createInflate(zlibOptions(cutShort)) : createInflateRaw(zlibOptions(cutShort));
  return streamed(decoder, bytes, limit);
};

/** Thrown from fzstd's callback to stop it once the limit is reached (fzstd decodes synchronously). */
const LIMIT_REACHED = Symbol("limit reached");

/** Node 20's zlib has no zstd: fzstd decodes it in plain JavaScript, block by block, stopped at the limit. */
const unzstd: Decoder = async (bytes, cutShort, limit) => {
  const collector = new Collector(limit);
  const stream = new ZstdDecompress((part) => {
    if (!collector.keep(part)) throw LIMIT_REACHED;
  });
  try {
    stream.push(bytes, !cutShort);
  } catch (error) {
    if (error !== LIMIT_REACHED) throw error;
  }
  return collector.result();
};

const gunzip: Decoder = (bytes, cutShort, limit) => streamed(createGunzip(zlibOptions(cutShort)), bytes, limit);
const DECODERS: Record<string, Decoder> = {
  gzip: gunzip,
  "x-gzip": gunzip,
  deflate: inflateEither,
  br: (bytes, cutShort, limit) =>
    streamed(createBrotliDecompress(cutShort ? { finishFlush: constants.BROTLI_OPERATION_FLUSH } : {}), bytes, limit),
  zstd: unzstd,
};

/** The codings in the order they were applied, `identity` left out (RFC 9110 §8.4: a comma-separated list). */
function codings(contentEncoding: string): string[] {
  return contentEncoding
    .split(",")
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== "" && coding !== "identity");
}

/** Whether a body sent with this `content-encoding` is decoded before it is stored (not identity). */
export function isEncoded(contentEncoding: string | undefined): boolean {
  return codings(contentEncoding ?? "").length > 0;
}

/** The bytes up to the last whole UTF-8 character: a cut may fall inside one (RFC 3629 §3, continuation bytes 10xxxxxx). */
function wholeCharacters(bytes: Uint8Array): Uint8Array {
  let end = bytes.length;
  let back = 0;
  while (end > 0 && back < 3 && (bytes[end - 1]! & 0xc0) === 0x80) {
    end--;
    back++;
  }
  if (end === 0) return bytes;
  const lead = bytes[end - 1]!;
  const length = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  return length > back + 1 ? bytes.subarray(0, end - 1) : bytes;
}

const asText = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8");

export interface DecodeOptions {
  /** The upstream broke off: decode as far as the bytes go. */
  cutShort?: boolean;
  /** The most decoded bytes to keep (default `decodedLimit` of the wire size). */
  limit?: number;
}

/**
 * A body's text from its wire bytes and its `content-encoding` header: codings are undone last first
 * (`gzip, br` was gzipped, then brotli-compressed). A body that cannot be decoded has no text and
 * says why; its bytes are never passed off as text. A body `cutShort` (the upstream broke off) is
 * decoded as far as it goes, as a cut event stream is parsed as far as it goes; a whole body must
 * decode whole, since brotli, which has no header, reads a few random bytes as a valid beginning.
 * Each coding is decoded as a stream stopped at the limit: a body that decodes to more keeps its
 * first `limit` bytes (whole characters) and says so in `truncated`; the next coding of a body cut
 * there is decoded as far as it goes. Pure (no I/O), so the capture can run it wherever it runs.
 */
export async function decodeBody(
  bytes: Uint8Array,
  contentEncoding: string | undefined,
  { cutShort = false, limit = decodedLimit(bytes.length) }: DecodeOptions = {},
): Promise<DecodedBody> {
  const applied = codings(contentEncoding ?? "");
  // A view of the bytes, not a copy: a body may be tens of megabytes.
  if (applied.length === 0) return { text: asText(bytes) };
  const encoding: BodyEncoding = { contentEncoding: contentEncoding!, wireBytes: bytes.length };
  let decoded: Decoded = { bytes, cut: false };
  for (const coding of applied.reverse()) {
    const decoder = DECODERS[coding];
    if (!decoder) return { text: "", encoding: { ...encoding, undecodable: `unknown content-encoding ${coding}` } };
    try {
      const next = await decoder(decoded.bytes, cutShort || decoded.cut, limit);
      decoded = { bytes: next.bytes, cut: decoded.cut || next.cut };
    } catch (error) {
      const reason = `not valid ${coding}: ${(error as Error).message}`;
      return { text: "", encoding: { ...encoding, undecodable: reason } };
    }
  }
  if (!decoded.cut) return { text: asText(decoded.bytes), encoding };
  const truncated = `it decodes to more than ${limit} bytes (the capture decodes at most ${DECODED_RATIO_LIMIT} times the wire size, at least ${DECODED_FLOOR} and at most ${DECODED_BODY_LIMIT} bytes); its first ${limit} bytes are stored, to the last whole character`;
  return { text: asText(wholeCharacters(decoded.bytes)), encoding: { ...encoding, truncated } };
}
