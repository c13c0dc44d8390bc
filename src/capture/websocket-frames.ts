import { constants, inflateRawSync } from "node:zlib";

/** What one direction of a WebSocket carried: how many frames, and each one's payload size in bytes. */
export interface FrameSizes {
  count: number;
  sizes: number[];
}

/** Told each whole text message of a direction, decoded: unmasked, its fragments joined, inflated. */
export type MessageListener = (text: string) => void;

/** RFC 7692 §7.2.2: a message's compressed payload lacks the sync flush's empty block, which the reader appends. */
const FLUSH_TAIL = Buffer.from([0x00, 0x00, 0xff, 0xff]);
/** The most a permessage-deflate sender may refer back to (RFC 7692 §7.1.2.1: 2^15 bytes at most). */
const WINDOW = 32 * 1024;

/**
 * Inflates one direction's permessage-deflate messages (RFC 7692). With context takeover, a message may
 * refer back into the last 32 KiB of what came before it, so that much of the inflated text is kept and
 * given to zlib as the preset dictionary; a sender that resets its context never refers back, and the
 * dictionary goes unused.
 */
class MessageInflater {
  private window = Buffer.alloc(0);

  inflate(payload: Buffer): Buffer {
    const input = Buffer.concat([payload, FLUSH_TAIL]);
    const options = { finishFlush: constants.Z_SYNC_FLUSH, ...(this.window.length > 0 && { dictionary: this.window }) };
    const text = inflateRawSync(input, options);
    const joined = Buffer.concat([this.window, text]);
    this.window = joined.subarray(Math.max(0, joined.length - WINDOW));
    return text;
  }
}

/** A frame header read: its length, its payload's, and what the decoder needs of the rest. */
interface FrameHeader {
  headerBytes: number;
  payloadBytes: number;
  fin: boolean;
  rsv1: boolean;
  opcode: number;
  mask: Buffer | null;
}

/**
 * Reads the frames of one direction of a WebSocket (RFC 6455 §5.2); chunks may split a header
 * anywhere. It always counts each frame's payload size. Only when told to decode (a socket whose
 * messages the capture reads) does it keep payloads: each data message's frames are unmasked (§5.3),
 * joined (§5.4) and, when compressed, inflated, and the text goes to `onMessage`. Control frames
 * (§5.5), which may come between fragments, are counted and skipped.
 */
export class FrameCounter {
  readonly seen: FrameSizes = { count: 0, sizes: [] };
  /** Bytes of a frame header not yet complete. */
  private header = Buffer.alloc(0);
  /** Payload bytes of the current frame still to come. */
  private remaining = 0;
  private current: FrameHeader | null = null;
  private payload: Buffer[] = [];
  /** The fragments of the data message under way, and whether its first frame said it is compressed. */
  private message: Buffer[] = [];
  private compressed = false;
  private inflater: MessageInflater | null = null;
  private onMessage: MessageListener | null = null;
  /** Why decoding stopped (a message that would not inflate): the bytes are still counted and relayed. */
  failure: string | undefined;

  /** Decode this direction's messages from now on; `deflate` when the handshake agreed on permessage-deflate. */
  decode(onMessage: MessageListener, deflate: boolean): void {
    this.onMessage = onMessage;
    this.inflater = deflate ? new MessageInflater() : null;
  }

  push(chunk: Buffer): void {
    let at = 0;
    while (at < chunk.length) {
      if (this.remaining > 0) {
        const taken = Math.min(this.remaining, chunk.length - at);
        if (this.onMessage) this.payload.push(chunk.subarray(at, at + taken));
        this.remaining -= taken;
        at += taken;
        if (this.remaining === 0) this.frameDone();
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
      this.current = read;
      this.remaining = read.payloadBytes;
      if (this.remaining === 0) this.frameDone();
    }
  }

  private frameDone(): void {
    const frame = this.current!;
    this.current = null;
    const parts = this.payload;
    this.payload = [];
    if (!this.onMessage || frame.opcode >= 0x8) return;
    const payload = Buffer.concat(parts);
    if (frame.mask) for (let i = 0; i < payload.length; i++) payload[i]! ^= frame.mask[i % 4]!;
    // A text (1) or binary (2) frame starts a message; continuation frames (0) carry its rest.
    if (frame.opcode !== 0x0) {
      this.message = [];
      this.compressed = frame.rsv1;
    }
    this.message.push(payload);
    if (!frame.fin) return;
    const whole = Buffer.concat(this.message);
    this.message = [];
    try {
      const bytes = this.compressed && this.inflater ? this.inflater.inflate(whole) : whole;
      this.onMessage(bytes.toString("utf8"));
    } catch (error) {
      // Called from the relay's data handler: a throw here would stop the relay, so decoding stops instead.
      this.onMessage = null;
      this.failure = `a message could not be decoded: ${(error as Error).message}`;
    }
  }
}

/** A frame header, or null when `bytes` do not yet hold the whole of it. */
function frameHeader(bytes: Buffer): FrameHeader | null {
  if (bytes.length < 2) return null;
  const masked = (bytes[1]! & 0x80) !== 0;
  const length7 = bytes[1]! & 0x7f;
  const extended = length7 === 126 ? 2 : length7 === 127 ? 8 : 0;
  const headerBytes = 2 + extended + (masked ? 4 : 0);
  if (bytes.length < headerBytes) return null;
  const payloadBytes =
    extended === 2 ? bytes.readUInt16BE(2) : extended === 8 ? Number(bytes.readBigUInt64BE(2)) : length7;
  return {
    headerBytes,
    payloadBytes,
    fin: (bytes[0]! & 0x80) !== 0,
    rsv1: (bytes[0]! & 0x40) !== 0,
    opcode: bytes[0]! & 0x0f,
    mask: masked ? Buffer.from(bytes.subarray(2 + extended, headerBytes)) : null,
  };
}
