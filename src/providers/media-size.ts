/**
 * What the token rules of media-rules.ts need from an image or a document sent inline: an image's
 * size in pixels, read from its header, and a PDF's page count. Both are read from the base64 text
 * the request carries.
 */
import { imageSize } from "image-size";

/** The formats the three providers take as images; anything else is not priced as one. */
const IMAGE_TYPES: ReadonlySet<string> = new Set(["png", "jpg", "gif", "webp"]);

/**
 * Enough of an image to hold its size: PNG, GIF and WebP name it in their first bytes, a JPEG in its
 * frame header, after whatever metadata (EXIF, a colour profile, a thumbnail) comes first.
 */
const HEADER_BASE64_CHARS = 256 * 1024;

/** An image's width and height in pixels, or undefined when the bytes are no image of a known format. */
export function imageDimensions(base64: string): { width: number; height: number } | undefined {
  const read = (chars: number) => {
    try {
      const size = imageSize(Buffer.from(base64.slice(0, chars), "base64"));
      return size.type !== undefined && IMAGE_TYPES.has(size.type) && size.width > 0 && size.height > 0
        ? { width: size.width, height: size.height }
        : undefined;
    } catch {
      return undefined;
    }
  };
  // A JPEG whose frame header lies past the first bytes is read again whole.
  return read(HEADER_BASE64_CHARS) ?? (base64.length > HEADER_BASE64_CHARS ? read(base64.length) : undefined);
}

/**
 * A page object of a PDF: `/Type /Page`, not `/Pages` (the tree's inner nodes). What this misses: a
 * PDF 1.5 file may keep its page objects in compressed object streams, where no `/Type /Page` can be
 * seen in the bytes; such a document is counted as one page. A parser that inflates the streams
 * (pdf-lib, with four dependencies of its own) would load and parse the whole document for a number.
 */
const PAGE_OBJECT = /\/Type\s*\/Page(?![A-Za-z])/g;

/** The pages of a PDF sent as base64, at least one. */
export function pdfPageCount(base64: string): number {
  const text = Buffer.from(base64, "base64").toString("latin1");
  return Math.max(1, text.match(PAGE_OBJECT)?.length ?? 0);
}
