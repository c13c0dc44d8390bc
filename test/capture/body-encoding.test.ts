/**
 * Decoding compressed bodies within bounds (issue 35): a body that inflates past its limit keeps its
 * beginning and says so; the decoder stops there rather than inflate the rest.
 */
import { once } from "node:events";
import { brotliCompressSync, constants, createBrotliCompress, createGzip, gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import {
  DECODED_BODY_LIMIT,
  DECODED_FLOOR,
  DECODED_RATIO_LIMIT,
  decodeBody,
  decodedLimit,
} from "../../src/capture/body-encoding.js";

/** `size` bytes of one letter, compressed as a stream of 1 MiB writes (the test never holds them all). */
async function bomb(compressor: ReturnType<typeof createGzip>, size: number): Promise<Buffer> {
  const parts: Buffer[] = [];
  compressor.on("data", (part: Buffer) => parts.push(part));
  const chunk = Buffer.alloc(1024 * 1024, "a");
  for (let written = 0; written < size; written += chunk.length)
    if (!compressor.write(chunk)) await once(compressor, "drain");
  compressor.end();
  await once(compressor, "end");
  return Buffer.concat(parts);
}

/**
 * A zstd frame (RFC 8878 §3.1.1) of `blocks` RLE blocks, each 128 KiB of one byte from 4 bytes on the
 * wire: magic, a descriptor with no content size, a 128 KiB window (exponent 7), then the blocks.
 */
function zstdRepeats(blocks: number): Buffer {
  const header = Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, 7 << 3]);
  const parts = [header];
  for (let i = 0; i < blocks; i++) {
    const block = Buffer.alloc(4);
    const last = i === blocks - 1 ? 1 : 0;
    block.writeUIntLE(((128 * 1024) << 3) | (1 << 1) | last, 0, 3);
    block[3] = 0x61;
    parts.push(block);
  }
  return Buffer.concat(parts);
}

describe("decodeBody: limits", () => {
  it("a compressed body may decode to a ratio of its wire size, within a floor and a ceiling", () => {
    expect(decodedLimit(455)).toBe(DECODED_FLOOR);
    expect(decodedLimit(250_000)).toBe(250_000 * DECODED_RATIO_LIMIT);
    expect(decodedLimit(10 * 1024 * 1024)).toBe(DECODED_BODY_LIMIT);
  });

  it("a gzip bomb keeps its first limit bytes and says so", async () => {
    const wire = await bomb(createGzip({ level: 1 }), 64 * 1024 * 1024);
    const limit = decodedLimit(wire.length);
    expect(limit).toBeLessThan(64 * 1024 * 1024);
    const { text, encoding } = await decodeBody(wire, "gzip");
    expect(text).toBe("a".repeat(limit));
    expect(encoding).toEqual({
      contentEncoding: "gzip",
      wireBytes: wire.length,
      truncated: expect.stringMatching(new RegExp(`^it decodes to more than ${limit} bytes `)),
    });
  });

  it("a brotli bomb of a few hundred bytes stops at the floor", async () => {
    const quality = { params: { [constants.BROTLI_PARAM_QUALITY]: 5 } };
    const wire = await bomb(createBrotliCompress(quality), 64 * 1024 * 1024);
    expect(wire.length).toBeLessThan(1024);
    const { text, encoding } = await decodeBody(wire, "br");
    expect(text.length).toBe(DECODED_FLOOR);
    expect(encoding?.truncated).toMatch(/its first 8388608 bytes are stored/);
  });

  it("a zstd bomb (blocks of one repeated byte) stops at the floor", async () => {
    const { text, encoding } = await decodeBody(zstdRepeats(1024), "zstd");
    expect(text.length).toBe(DECODED_FLOOR);
    expect(encoding?.truncated).toMatch(/^it decodes to more than 8388608 bytes/);
  });

  it("a bomb inside another coding is cut in the inner coding too", async () => {
    const inner = await bomb(createGzip({ level: 1 }), 32 * 1024 * 1024);
    const wire = brotliCompressSync(inner);
    const { text, encoding } = await decodeBody(wire, "gzip, br", { limit: 1000 });
    expect(text).toBe("a".repeat(1000));
    expect(encoding?.truncated).toMatch(/^it decodes to more than 1000 bytes/);
  });

  it("a cut never splits a character", async () => {
    const wire = gzipSync(Buffer.from("€".repeat(100)));
    const { text } = await decodeBody(wire, "gzip", { limit: 10 });
    expect(text).toBe("€€€");
  });

  it("a body within its limit is whole and says nothing of a cut", async () => {
    const json = JSON.stringify({ text: "x".repeat(100_000) });
    const { text, encoding } = await decodeBody(gzipSync(json), "gzip");
    expect(text).toBe(json);
    expect(encoding?.truncated).toBeUndefined();
  });
});
