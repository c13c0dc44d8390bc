import { brotliDecompressSync, constants, gunzipSync, inflateRawSync, inflateSync } from "node:zlib";
import { Decompress as ZstdDecompress } from "fzstd";

/**
 * A body that crossed the wire with a `content-encoding`: the coding as sent, the bytes on the wire,
 * and why it could not be decoded (then the capture stores no text for it).
 */
export interface BodyEncoding {
  contentEncoding: string;
  wireBytes: number;
  undecodable?: string;
}

/** What a body's wire bytes are as text: the text, and how it was encoded (absent when it was not). */
export interface DecodedBody {
  text: string;
  encoding?: BodyEncoding;
}

/**
 * The largest decoded body the capture takes (a run's default limit of request plus response bytes):
 * a few kilobytes of gzip can claim gigabytes, and a string of V8's maximum length cannot be stored.
 */
export const DECODED_BODY_LIMIT = 256 * 1024 * 1024;

/** Undoes one coding; `cutShort` decodes a body that ended early as far as it goes instead of failing. */
type Decoder = (bytes: Uint8Array, cutShort: boolean) => Uint8Array;

const zlibOptions = (cutShort: boolean) => ({
  maxOutputLength: DECODED_BODY_LIMIT,
  ...(cutShort && { finishFlush: constants.Z_SYNC_FLUSH }),
});
const brotliOptions = (cutShort: boolean) => ({
  maxOutputLength: DECODED_BODY_LIMIT,
  ...(cutShort && { finishFlush: constants.BROTLI_OPERATION_FLUSH }),
});

/**
 * `deflate` is the zlib format (RFC 9110 §8.4.1.2), but servers have long sent raw deflate for it,
 * and clients accept both; a zlib header is two bytes whose big-endian value is a multiple of 31 with method 8.
 */
function inflateEither(bytes: Uint8Array, cutShort: boolean): Uint8Array {
  const zlibHeader = bytes.length >= 2 && (bytes[0]! & 0x0f) === 8 && ((bytes[0]! << 8) | bytes[1]!) % 31 === 0;
  return zlibHeader ? inflateSync(bytes, zlibOptions(cutShort)) : inflateRawSync(bytes, zlibOptions(cutShort));
}

/** Node 20's zlib has no zstd: fzstd decodes it in plain JavaScript, streamed so the limit holds before memory is taken. */
function unzstd(bytes: Uint8Array, cutShort: boolean): Uint8Array {
  const parts: Uint8Array[] = [];
  let total = 0;
  const stream = new ZstdDecompress((part) => {
    total += part.length;
    if (total > DECODED_BODY_LIMIT) throw new RangeError(`the decoded body exceeds ${DECODED_BODY_LIMIT} bytes`);
    parts.push(part);
  });
  stream.push(bytes, !cutShort);
  return Buffer.concat(parts);
}

const gunzip: Decoder = (bytes, cutShort) => gunzipSync(bytes, zlibOptions(cutShort));
const DECODERS: Record<string, Decoder> = {
  gzip: gunzip,
  "x-gzip": gunzip,
  deflate: inflateEither,
  br: (bytes, cutShort) => brotliDecompressSync(bytes, brotliOptions(cutShort)),
  zstd: unzstd,
};

/** The codings in the order they were applied, `identity` left out (RFC 9110 §8.4: a comma-separated list). */
function codings(contentEncoding: string): string[] {
  return contentEncoding
    .split(",")
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== "" && coding !== "identity");
}

/**
 * A body's text from its wire bytes and its `content-encoding` header: codings are undone last first
 * (`gzip, br` was gzipped, then brotli-compressed). A body that cannot be decoded has no text and
 * says why; its bytes are never passed off as text. A body `cutShort` (the upstream broke off) is
 * decoded as far as it goes, as a cut event stream is parsed as far as it goes; a whole body must
 * decode whole, since brotli, which has no header, reads a few random bytes as a valid beginning.
 * Pure, so the capture can run it wherever it runs.
 */
export function decodeBody(bytes: Uint8Array, contentEncoding: string | undefined, cutShort = false): DecodedBody {
  const applied = codings(contentEncoding ?? "");
  // A view of the bytes, not a copy: a body may be tens of megabytes.
  if (applied.length === 0)
    return { text: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8") };
  const encoding: BodyEncoding = { contentEncoding: contentEncoding!, wireBytes: bytes.length };
  let decoded = bytes;
  for (const coding of applied.reverse()) {
    const decoder = DECODERS[coding];
    if (!decoder) return { text: "", encoding: { ...encoding, undecodable: `unknown content-encoding ${coding}` } };
    try {
      decoded = decoder(decoded, cutShort);
    } catch (error) {
      const reason = `not valid ${coding}: ${(error as Error).message}`;
      return { text: "", encoding: { ...encoding, undecodable: reason } };
    }
  }
  return { text: Buffer.from(decoded.buffer, decoded.byteOffset, decoded.byteLength).toString("utf8"), encoding };
}
