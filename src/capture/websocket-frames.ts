/** What one direction of a WebSocket carried: how many frames, and each one's payload size in bytes. */
export interface FrameSizes {
  count: number;
  sizes: number[];
}

/**
 * Counts the frames of one direction of a WebSocket (RFC 6455 §5.2) from their headers alone: the
 * payload is skipped, never kept, since it may carry credentials. Chunks may split a header anywhere.
 */
export class FrameCounter {
  readonly seen: FrameSizes = { count: 0, sizes: [] };
  /** Bytes of a frame header not yet complete. */
  private header = Buffer.alloc(0);
  /** Payload bytes of the current frame still to skip. */
  private skip = 0;

  push(chunk: Buffer): void {
    let at = 0;
    while (at < chunk.length) {
      if (this.skip > 0) {
        const skipped = Math.min(this.skip, chunk.length - at);
        this.skip -= skipped;
        at += skipped;
        continue;
      }
      // A header is at most 14 bytes: borrow that many, then give back what belongs to the payload.
      const before = this.header.length;
      const borrowed = chunk.subarray(at, at + 14 - before);
      this.header = Buffer.concat([this.header, borrowed]);
      const read = frameHeader(this.header);
      if (read === null) {
        at += borrowed.length;
        continue;
      }
      at += read.headerBytes - before;
      this.header = Buffer.alloc(0);
      this.seen.count += 1;
      this.seen.sizes.push(read.payloadBytes);
      this.skip = read.payloadBytes;
    }
  }
}

/** A frame header's length and its payload's, or null when `bytes` do not yet hold the whole header. */
function frameHeader(bytes: Buffer): { headerBytes: number; payloadBytes: number } | null {
  if (bytes.length < 2) return null;
  const masked = (bytes[1]! & 0x80) !== 0;
  const length7 = bytes[1]! & 0x7f;
  const extended = length7 === 126 ? 2 : length7 === 127 ? 8 : 0;
  const headerBytes = 2 + extended + (masked ? 4 : 0);
  if (bytes.length < headerBytes) return null;
  const payloadBytes =
    extended === 2 ? bytes.readUInt16BE(2) : extended === 8 ? Number(bytes.readBigUInt64BE(2)) : length7;
  return { headerBytes, payloadBytes };
}
