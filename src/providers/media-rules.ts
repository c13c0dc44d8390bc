/**
 * The providers' documented rules for what an image or a document in a request costs in tokens, in
 * one place, as cache-rules.ts keeps their cache rules: a picture is billed by its size in pixels and
 * a PDF by its pages, never by the length of its base64 text. Each rule names the page it comes from.
 * Sizes and page counts come from the bytes themselves (media-size.ts).
 */

/**
 * Anthropic (Claude docs, "Vision" → "Evaluate image size" and "Calculate image costs",
 * https://platform.claude.com/docs/en/build-with-claude/vision): an image whose long edge is over
 * 1,568 pixels, or which would cost more than about 1,600 tokens, is first scaled down, keeping its
 * aspect ratio, until it fits both; it then costs `width × height / 750` tokens. 1,600 tokens are
 * 1,200,000 pixels at that rate, the cap taken here (the page also rounds it to "about 1.15
 * megapixels").
 */
const ANTHROPIC_LONG_EDGE = 1568;
const ANTHROPIC_PIXELS_PER_TOKEN = 750;
const ANTHROPIC_MAX_IMAGE_TOKENS = 1600;

export function anthropicImageTokens(width: number, height: number): number {
  const maxPixels = ANTHROPIC_MAX_IMAGE_TOKENS * ANTHROPIC_PIXELS_PER_TOKEN;
  const scale = Math.min(1, ANTHROPIC_LONG_EDGE / Math.max(width, height), Math.sqrt(maxPixels / (width * height)));
  const w = Math.floor(width * scale);
  const h = Math.floor(height * scale);
  return Math.ceil((w * h) / ANTHROPIC_PIXELS_PER_TOKEN);
}

/**
 * Anthropic PDFs (Claude docs, "PDF support" → "Estimate your costs",
 * https://platform.claude.com/docs/en/build-with-claude/pdf-support): each page is converted into an
 * image, billed as images are, and its extracted text is added besides ("typically 1,500 to 3,000
 * tokens per page depending on content density"). A page is counted here as one image at the
 * vision cap above; the text of a page is not read from the document (see docs/decisions.md), so a
 * page of dense text costs more than this says.
 */
export const ANTHROPIC_PDF_PAGE_TOKENS = ANTHROPIC_MAX_IMAGE_TOKENS;

/**
 * Gemini ("Understand and count tokens" → images and PDFs, https://ai.google.dev/gemini-api/docs/tokens,
 * and "Document understanding", https://ai.google.dev/gemini-api/docs/document-processing): an image
 * with both sides at most 384 pixels is 258 tokens; a larger one is cropped and scaled into tiles of
 * 768 × 768 pixels, 258 tokens each; each page of a PDF is 258 tokens. (Gemini 3's
 * `media_resolution` setting changes these; a request that sets it is still counted by this rule.)
 */
const GEMINI_TOKENS = 258;
const GEMINI_SMALL_SIDE = 384;
const GEMINI_TILE = 768;
export const GEMINI_PDF_PAGE_TOKENS = GEMINI_TOKENS;

export function geminiImageTokens(width: number, height: number): number {
  if (width <= GEMINI_SMALL_SIDE && height <= GEMINI_SMALL_SIDE) return GEMINI_TOKENS;
  return Math.ceil(width / GEMINI_TILE) * Math.ceil(height / GEMINI_TILE) * GEMINI_TOKENS;
}

/**
 * OpenAI ("Images and vision" → "Calculating costs",
 * https://developers.openai.com/api/docs/guides/images-vision#calculating-costs), two rules by model:
 *
 * - Patches: the image is covered by 32 × 32 pixel patches; over 1,536 of them, it is scaled down
 *   (keeping its aspect ratio) until its patches fit in 1,536; the patches times the model's
 *   multiplier are its tokens. `detail` does not apply.
 * - Tiles: `detail: "low"` costs the model's base tokens; otherwise the image is scaled to fit in a
 *   2,048 × 2,048 square, then down so its shortest side is 768 pixels, and each 512-pixel tile of it
 *   costs the model's tile tokens, on top of the base.
 *
 * `detail: "auto"` (the default) lets the model choose; it is counted as "high", the dearer of the two.
 * A model the table does not name takes GPT-4o's figures, the ones the page gives first.
 */
const OPENAI_PATCH = 32;
const OPENAI_MAX_PATCHES = 1536;
const OPENAI_PATCH_MULTIPLIERS: [RegExp, number][] = [
  [/gpt-5(\.\d+)?-mini|gpt-4\.1-mini/, 1.62],
  [/gpt-5(\.\d+)?-nano|gpt-4\.1-nano/, 2.46],
  [/o4-mini/, 1.72],
];
/** Base and per-tile tokens by model, the most specific pattern first. */
const OPENAI_TILES: [RegExp, { base: number; tile: number }][] = [
  [/gpt-4o-mini/, { base: 2833, tile: 5667 }],
  [/gpt-5/, { base: 70, tile: 140 }],
  [/(^|\/)o[13](-|$)/, { base: 75, tile: 150 }],
  [/computer-use/, { base: 65, tile: 129 }],
];
const OPENAI_DEFAULT_TILES = { base: 85, tile: 170 };

export function openaiImageTokens(model: string, width: number, height: number, detail: unknown): number {
  const multiplier = OPENAI_PATCH_MULTIPLIERS.find(([pattern]) => pattern.test(model))?.[1];
  if (multiplier !== undefined) return Math.ceil(openaiPatches(width, height) * multiplier);
  const { base, tile } = OPENAI_TILES.find(([pattern]) => pattern.test(model))?.[1] ?? OPENAI_DEFAULT_TILES;
  if (detail === "low") return base;
  const fit = Math.min(1, 2048 / Math.max(width, height));
  const [w, h] = [width * fit, height * fit];
  const shrink = Math.min(1, 768 / Math.min(w, h));
  return base + tile * Math.ceil((w * shrink) / 512) * Math.ceil((h * shrink) / 512);
}

/** The patches an image takes, scaled down first when it would take more than the cap. */
function openaiPatches(width: number, height: number): number {
  const patches = (w: number, h: number) => Math.ceil(w / OPENAI_PATCH) * Math.ceil(h / OPENAI_PATCH);
  if (patches(width, height) <= OPENAI_MAX_PATCHES) return patches(width, height);
  // The page's steps: scale to the cap's area, then down again so whole patches fit across the width.
  const shrink = Math.sqrt((OPENAI_MAX_PATCHES * OPENAI_PATCH * OPENAI_PATCH) / (width * height));
  const across = (width * shrink) / OPENAI_PATCH;
  const down = (height * shrink) / OPENAI_PATCH;
  const fit = shrink * Math.min(Math.floor(across) / across, Math.floor(down) / down);
  return Math.min(OPENAI_MAX_PATCHES, patches(width * fit, height * fit));
}

/**
 * OpenAI file inputs (`input_file`, chat's `file`; "File inputs",
 * https://developers.openai.com/api/docs/guides/pdf-files): for a PDF, the extracted text and an image
 * of each page are both put in the model's context. A page is counted here as a high-detail image of a
 * US Letter page (8.5 × 11 inches) at 2,048 pixels tall, by the model's rule above; its text, as for
 * Anthropic, is not read from the document.
 */
export function openaiPdfPageTokens(model: string): number {
  return openaiImageTokens(model, Math.round((2048 * 8.5) / 11), 2048, "high");
}
