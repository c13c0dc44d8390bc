/**
 * Images and documents in the context: each counted by its provider's documented rule (a picture by
 * its size in pixels, a PDF by its pages), not by its base64 text. Real image headers (PNG, JPEG,
 * GIF, WebP) and a real two-page PDF are written here, sent with the official clients through the
 * capture proxy in front of the mock on all four wire APIs, and the records' `image` and `document`
 * sources are checked against the rules' arithmetic, the sources still adding up to the total.
 */
import { join } from "node:path";
import { crc32 } from "node:zlib";
import Anthropic from "@anthropic-ai/sdk";
import { GoogleGenAI } from "@google/genai";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CaptureProxy, startCaptureProxy } from "../../src/capture/capture-proxy.js";
import { type MockServer, startMockServer } from "../../src/capture/mock-server.js";
import type { RequestRecord } from "../../src/capture/types.js";
import { anthropicImageTokens, geminiImageTokens, openaiImageTokens } from "../../src/providers/media-rules.js";
import { imageDimensions, pdfPageCount } from "../../src/providers/media-size.js";
import { baseUrlFor } from "../../src/providers/models.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";
import { jsonl } from "./http-harness.js";

/** Pixel data after the header: enough that its base64 text would count as thousands of tokens. */
const FILLER = Buffer.from(Array.from({ length: 24_000 }, (_, i) => (i * 7919) % 251));

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, "latin1"), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

/** A PNG of the given size: signature, IHDR (8-bit RGB), one IDAT of filler, IEND. */
function png(width: number, height: number): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.writeUInt8(8, 8);
  header.writeUInt8(2, 9);
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([signature, chunk("IHDR", header), chunk("IDAT", FILLER), chunk("IEND", Buffer.alloc(0))]);
}

/** A baseline JPEG: SOI, a JFIF APP0, a comment of filler, then its frame header (SOF0) naming the size. */
function jpeg(width: number, height: number): Buffer {
  const segment = (marker: number, data: Buffer) => {
    const head = Buffer.from([0xff, marker, 0, 0]);
    head.writeUInt16BE(data.length + 2, 2);
    return Buffer.concat([head, data]);
  };
  const app0 = Buffer.from([0x4a, 0x46, 0x49, 0x46, 0, 1, 1, 0, 0, 1, 0, 1, 0, 0]);
  const sof = Buffer.from([8, 0, 0, 0, 0, 3, 1, 0x11, 0, 2, 0x11, 1, 3, 0x11, 1]);
  sof.writeUInt16BE(height, 1);
  sof.writeUInt16BE(width, 3);
  const soi = Buffer.from([0xff, 0xd8]);
  return Buffer.concat([soi, segment(0xe0, app0), segment(0xfe, FILLER.subarray(0, 20_000)), segment(0xc0, sof)]);
}

/** A GIF89a's logical screen descriptor names its size, little-endian. */
function gif(width: number, height: number): Buffer {
  const screen = Buffer.alloc(7);
  screen.writeUInt16LE(width, 0);
  screen.writeUInt16LE(height, 2);
  return Buffer.concat([Buffer.from("GIF89a", "latin1"), screen, FILLER]);
}

/** An extended WebP (VP8X): canvas width and height less one, 24-bit little-endian. */
function webp(width: number, height: number): Buffer {
  const vp8x = Buffer.alloc(10);
  vp8x.writeUIntLE(width - 1, 4, 3);
  vp8x.writeUIntLE(height - 1, 7, 3);
  const chunks = Buffer.concat([Buffer.from("WEBPVP8X", "latin1"), Buffer.from([10, 0, 0, 0]), vp8x, FILLER]);
  const size = Buffer.alloc(4);
  size.writeUInt32LE(chunks.length);
  return Buffer.concat([Buffer.from("RIFF", "latin1"), size, chunks]);
}

/** A PDF of `pages` empty US Letter pages, its cross-reference table pointing at each object. */
function pdf(pages: number): Buffer {
  const kids = Array.from({ length: pages }, (_, i) => `${i + 3} 0 R`).join(" ");
  const objects = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    `<< /Type /Pages /Kids [${kids}] /Count ${pages} >>`,
    ...Array.from({ length: pages }, () => "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>"),
  ];
  let text = "%PDF-1.4\n";
  const offsets: number[] = [];
  objects.forEach((object, i) => {
    offsets.push(text.length);
    text += `${i + 1} 0 obj\n${object}\nendobj\n`;
  });
  const xref = text.length;
  text += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const offset of offsets) text += `${String(offset).padStart(10, "0")} 00000 n \n`;
  text += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(text, "latin1");
}

const b64 = (bytes: Buffer) => bytes.toString("base64");
const sum = (sources: Record<string, number>) => Object.values(sources).reduce((a, b) => a + b, 0);

describe("the documented rules, on the providers' own worked examples", () => {
  it("OpenAI tiles and patches, Anthropic's area and resize, Gemini's tiles", () => {
    // OpenAI's page: 1024 × 1024 high is 765, 2048 × 4096 high is 1,105, low is the base whatever the size.
    expect(openaiImageTokens("gpt-4o", 1024, 1024, "high")).toBe(765);
    expect(openaiImageTokens("gpt-4o", 2048, 4096, "auto")).toBe(1105);
    expect(openaiImageTokens("gpt-4o", 4096, 8192, "low")).toBe(85);
    expect(openaiImageTokens("gpt-5", 1024, 1024, "high")).toBe(70 + 4 * 140);
    // Patches: 1024 × 1024 is 1,024 patches; 1800 × 2400 is scaled to 1,452.
    expect(openaiImageTokens("gpt-4.1-mini", 1024, 1024, "low")).toBe(Math.ceil(1024 * 1.62));
    expect(openaiImageTokens("gpt-5-mini", 1800, 2400, "high")).toBe(Math.ceil(1452 * 1.62));
    // Anthropic: 1000 × 1000 is 1,334; 1092 × 1092 (1.19 MP) 1,590; a 4000 × 3000 photo is capped.
    expect(anthropicImageTokens(1000, 1000)).toBe(1334);
    expect(anthropicImageTokens(1092, 1092)).toBe(1590);
    expect(anthropicImageTokens(4000, 3000)).toBeLessThanOrEqual(1600);
    expect(anthropicImageTokens(4000, 3000)).toBeGreaterThan(1590);
    // Gemini: both sides up to 384 is 258; else 768-pixel tiles of 258.
    expect(geminiImageTokens(384, 200)).toBe(258);
    expect(geminiImageTokens(1000, 800)).toBe(4 * 258);
  });

  it("sizes read from each format's header, pages from the PDF, no size from bytes of no image", () => {
    expect(imageDimensions(b64(png(1000, 700)))).toEqual({ width: 1000, height: 700 });
    expect(imageDimensions(b64(jpeg(1600, 1200)))).toEqual({ width: 1600, height: 1200 });
    expect(imageDimensions(b64(gif(300, 200)))).toEqual({ width: 300, height: 200 });
    expect(imageDimensions(b64(webp(2000, 900)))).toEqual({ width: 2000, height: 900 });
    expect(imageDimensions(b64(FILLER))).toBeUndefined();
    expect(pdfPageCount(b64(pdf(3)))).toBe(3);
  });
});

let runs: string;
let mock: MockServer;
let proxy: CaptureProxy;
let geminiProxy: CaptureProxy;

beforeAll(async () => {
  runs = tempDir("context-media-");
  const script = Array.from({ length: 8 }, (_, i) => ({ text: `Seen ${i + 1}.` }));
  mock = await startMockServer({ name: "media", markers: {}, script, modelId: "mock-model" }, { runsDir: runs });
  proxy = await startCaptureProxy({ upstream: mock.baseUrl, runsDir: runs, name: "media" });
  geminiProxy = await startCaptureProxy({
    routes: [{ prefix: "/gemini", upstream: mock.baseUrl.replace(/\/v1$/, "") }],
    runsDir: runs,
    name: "media-gemini",
  });
});

afterAll(async () => {
  await proxy?.close();
  await geminiProxy?.close();
  await mock?.close();
  removeTempDirs();
});

/** The record of the request just sent, once the capture has written it. */
async function lastRecord(server: CaptureProxy, count: number): Promise<RequestRecord> {
  const records = () => jsonl<RequestRecord>(join(server.liveDir, "requests.jsonl"));
  await expect.poll(() => records().length).toBe(count);
  return records().at(-1)!;
}

/** The media's sources are their rules' figures, the base64 counted nowhere, and the sum exact. */
function expectMedia(record: RequestRecord, want: { image: number; document?: number }): void {
  expect(record.sources!.image).toBe(want.image);
  expect(record.sources!.document).toBe(want.document);
  // Tens of thousands of base64 characters, had they been counted as text, would be history's.
  expect(record.sources!.history).toBeLessThan(150);
  expect(sum(record.sources!)).toBe(record.tokens!.total);
}

describe("through the capture, with the official clients", () => {
  it("Anthropic Messages: a PNG and a two-page PDF, then a screenshot in a tool result", async () => {
    const anthropic = new Anthropic({
      apiKey: "sk-ant-test",
      baseURL: baseUrlFor("anthropic-messages", proxy.url),
      maxRetries: 0,
    });
    const image = (bytes: Buffer) => ({
      type: "image" as const,
      source: { type: "base64" as const, media_type: "image/png" as const, data: b64(bytes) },
    });
    const first = {
      role: "user" as const,
      content: [
        image(png(1000, 700)),
        {
          type: "document" as const,
          source: { type: "base64" as const, media_type: "application/pdf" as const, data: b64(pdf(2)) },
        },
        { type: "text" as const, text: "What do these show?" },
      ],
    };
    await anthropic.messages.create({ model: "claude-sonnet-4-5", max_tokens: 64, messages: [first] });
    // width × height / 750; a page at the vision cap.
    expectMedia(await lastRecord(proxy, 1), { image: Math.ceil((1000 * 700) / 750), document: 2 * 1600 });

    await anthropic.messages.create({
      model: "claude-sonnet-4-5",
      max_tokens: 64,
      tools: [{ name: "screenshot", description: "Takes a screenshot.", input_schema: { type: "object" } }],
      messages: [
        first,
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "screenshot", input: {} }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: [image(png(3000, 2000))] }] },
      ],
    });
    const second = await lastRecord(proxy, 2);
    // 3000 × 2000 is scaled to fit 1,568 on its long edge and 1.2 MP: 1,341 × 894.
    expectMedia(second, { image: 934 + Math.ceil((1341 * 894) / 750), document: 3200 });
    expect(second.sources!["result:screenshot"]).toBeGreaterThan(0);
    expect(second.sources!["result:screenshot"]).toBeLessThan(60);
  });

  it("chat completions: a high-detail JPEG, a low-detail GIF and a three-page PDF on gpt-4o", async () => {
    const openai = new OpenAI({ apiKey: "sk-test", baseURL: proxy.url, maxRetries: 0 });
    const dataUrl = (type: string, bytes: Buffer) => `data:${type};base64,${b64(bytes)}`;
    await openai.chat.completions.create({
      model: "gpt-4o",
      messages: [
        {
          role: "user",
          content: [
            { type: "image_url", image_url: { url: dataUrl("image/jpeg", jpeg(1600, 1200)), detail: "high" } },
            { type: "image_url", image_url: { url: dataUrl("image/gif", gif(300, 200)), detail: "low" } },
            { type: "file", file: { filename: "notes.pdf", file_data: dataUrl("application/pdf", pdf(3)) } },
            { type: "text", text: "Compare them." },
          ],
        },
      ],
    });
    // 1600 × 1200 → 1024 × 768 → 4 tiles: 85 + 4 × 170; low: 85. A page: 768 × 994 → 4 tiles.
    expectMedia(await lastRecord(proxy, 3), { image: 765 + 85, document: 3 * 765 });
  });

  it("Responses: a WebP past the patch cap and a one-page PDF on gpt-5-mini", async () => {
    const openai = new OpenAI({ apiKey: "sk-test", baseURL: proxy.url, maxRetries: 0 });
    await openai.responses.create({
      model: "gpt-5-mini",
      input: [
        {
          role: "user",
          content: [
            { type: "input_image", image_url: `data:image/webp;base64,${b64(webp(2000, 900))}`, detail: "auto" },
            { type: "input_file", filename: "one.pdf", file_data: `data:application/pdf;base64,${b64(pdf(1))}` },
            { type: "input_text", text: "Describe them." },
          ],
        },
      ],
    });
    // 63 × 29 patches is over 1,536: the page's steps scale it to 1,849 × 832, 58 × 26 patches, × 1.62.
    // A page: 1,583 × 2,048 is over the cap too, so it is priced by the same steps.
    expectMedia(await lastRecord(proxy, 4), {
      image: Math.ceil(58 * 26 * 1.62),
      document: openaiImageTokens("gpt-5-mini", 1583, 2048, "high"),
    });
  });

  it("Gemini: a small GIF, a PNG of two tiles and a two-page PDF", async () => {
    const ai = new GoogleGenAI({
      apiKey: "AIzaSyTEST0000000000000000000000000000000",
      httpOptions: { baseUrl: `${geminiProxy.origin}/gemini` },
    });
    await ai.models.generateContent({
      model: "gemini-2.5-flash",
      contents: [
        {
          role: "user",
          parts: [
            { inlineData: { mimeType: "image/gif", data: b64(gif(300, 200)) } },
            { inlineData: { mimeType: "image/png", data: b64(png(1000, 700)) } },
            { inlineData: { mimeType: "application/pdf", data: b64(pdf(2)) } },
            { text: "What are these?" },
          ],
        },
      ],
    });
    // 300 × 200: 258; 1000 × 700: 2 × 1 tiles of 258; 258 a page.
    expectMedia(await lastRecord(geminiProxy, 1), { image: 258 + 2 * 258, document: 2 * 258 });
    expect(geminiImageTokens(1000, 700)).toBe(516);
  });
});
