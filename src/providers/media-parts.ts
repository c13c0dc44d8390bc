/**
 * The images and documents a message carries inline, each priced by its provider's documented rule
 * (media-rules.ts), and the message's JSON text without their base64 data, which is what is left to
 * count as text. Each API's shape names its provider, wherever in the message it sits (a tool result
 * may hold a screenshot):
 *
 *   Anthropic        {"type":"image"|"document","source":{"type":"base64","media_type":…,"data":…}}
 *   chat completions {"type":"image_url","image_url":{"url":"data:…;base64,…","detail":…}}
 *                    {"type":"file","file":{"file_data":"data:application/pdf;base64,…"}}
 *   Responses        {"type":"input_image","image_url":"data:…;base64,…","detail":…}
 *                    {"type":"input_file","file_data":"data:application/pdf;base64,…"}
 *   Gemini           {"inlineData":{"mimeType":…,"data":…}} (or `inline_data` / `mime_type`)
 *
 * An image or a file the body only points to (a URL, a file id) has no bytes here to size: it stays
 * text. So does an image whose header names no size, and a document that is no PDF.
 */
import {
  ANTHROPIC_PDF_PAGE_TOKENS,
  anthropicImageTokens,
  GEMINI_PDF_PAGE_TOKENS,
  geminiImageTokens,
  openaiImageTokens,
  openaiPdfPageTokens,
} from "./media-rules.js";
import { imageDimensions, pdfPageCount } from "./media-size.js";
import { asObject } from "./wire-json.js";

export type MediaSource = "image" | "document";

export interface MessageMedia {
  /** The message's JSON text with each medium's base64 data taken out. */
  json: string;
  /** Each image and document, by source, with its tokens. */
  parts: { source: MediaSource; tokens: number }[];
  /** The parts' tokens together. */
  tokens: number;
}

/**
 * Text every inline medium's JSON holds (`base64`, Gemini's `inlineData` / `inline_data`); a message
 * without any is passed over unparsed. One search for all three: half the time of three `includes`.
 */
const MARKER = /base64|inline_?[dD]ata/;

const PDF = "application/pdf";

type Found = { source: MediaSource; tokens: number; data: string };

/** Whether a message's JSON text may hold inline media: one search per marker, no parse. */
export function mayHoldMedia(json: string): boolean {
  return MARKER.test(json);
}

/** The message's inline media, or undefined when it has none. */
export function messageMedia(json: string, model: string): MessageMedia | undefined {
  if (!mayHoldMedia(json)) return undefined;
  const found: Found[] = [];
  collect(JSON.parse(json), model, found);
  if (found.length === 0) return undefined;
  let rest = json;
  // Base64 and a data URL's payload hold no character JSON escapes, so each is in the text as it is.
  for (const { data } of found) rest = rest.replace(data, "");
  const parts = found.map(({ source, tokens }) => ({ source, tokens }));
  return { json: rest, parts, tokens: parts.reduce((total, part) => total + part.tokens, 0) };
}

function collect(value: unknown, model: string, found: Found[]): void {
  if (Array.isArray(value)) {
    for (const item of value) collect(item, model, found);
    return;
  }
  if (value === null || typeof value !== "object") return;
  const medium = mediumOf(value as Record<string, unknown>, model);
  if (medium) {
    found.push(medium);
    return;
  }
  for (const field of Object.values(value)) collect(field, model, found);
}

/** The medium an object of the APIs' shapes is, priced; undefined when it is none (or cannot be priced). */
function mediumOf(item: Record<string, unknown>, model: string): Found | undefined {
  const source = asObject(item.source);
  if ((item.type === "image" || item.type === "document") && source.type === "base64")
    return priced(source.media_type, source.data, {
      image: anthropicImageTokens,
      page: ANTHROPIC_PDF_PAGE_TOKENS,
    });
  const inline = asObject(item.inlineData ?? item.inline_data);
  if (typeof inline.data === "string")
    return priced(inline.mimeType ?? inline.mime_type, inline.data, {
      image: geminiImageTokens,
      page: GEMINI_PDF_PAGE_TOKENS,
    });
  const openai = openaiMedium(item);
  const dataUrl = typeof openai?.url === "string" ? openai.url.match(/^data:([^;,]+);base64,/) : null;
  if (!openai || !dataUrl) return undefined;
  return priced(dataUrl[1], (openai.url as string).slice(dataUrl[0].length), {
    image: (width, height) => openaiImageTokens(model, width, height, openai.detail),
    page: openaiPdfPageTokens(model),
  });
}

/** An OpenAI image or file part's URL (a data URL when inline) and the detail it asks for. */
function openaiMedium(item: Record<string, unknown>): { url: unknown; detail?: unknown } | undefined {
  if (item.type === "input_image") return { url: item.image_url, detail: item.detail };
  if (item.type === "input_file") return { url: item.file_data };
  if (item.type === "image_url") {
    const image = asObject(item.image_url);
    return { url: image.url, detail: image.detail };
  }
  if (item.type === "file") return { url: asObject(item.file).file_data };
  return undefined;
}

/** An image by its size, a PDF by its pages; anything else is not priced. */
function priced(
  mediaType: unknown,
  data: unknown,
  rule: { image: (width: number, height: number) => number; page: number },
): Found | undefined {
  if (typeof mediaType !== "string" || typeof data !== "string" || data === "") return undefined;
  if (mediaType === PDF) return { source: "document", tokens: pdfPageCount(data) * rule.page, data };
  if (!mediaType.startsWith("image/")) return undefined;
  const size = imageDimensions(data);
  return size && { source: "image", tokens: rule.image(size.width, size.height), data };
}
