/**
 * A request body taken apart at the elements of its top-level arrays (a message, a tool definition,
 * a system block), as the run stores it (capture/body-parts.ts), without joining or parsing it whole.
 *
 * An agent sends its whole conversation again with every request, so what a reader derives from
 * an element (its tokens, its breakpoints, its place in a page) it derives once per run: each
 * element has a key that names its content (a stored part's hash, or the short element's own
 * text), and a reader keeps what it made of an element by that key. The fields around the
 * elements (the skeleton, a few hundred bytes) are parsed per body.
 */
import { cutElements, joinBody } from "../capture/body-parts.js";
import type { PartedBody } from "./load-run.js";

/** One element of a top-level array: a key naming its content, and its JSON text, read when asked for. */
export interface BodyElement {
  key: string;
  text(): string;
  /** The element's place among the body's parts; absent for a short element, which stays in the skeleton. */
  part?: number;
}

export interface BodyElements {
  /** The body's top-level fields; each array's elements are in `arrays`, not here. */
  top: Record<string, unknown>;
  /** The elements of each top-level array, in order. */
  arrays: Map<string, BodyElement[]>;
  /** The body's text between its parts: joined with them (`part` orders them), the body again. */
  skeleton: readonly string[];
  /** The text of the body's part at `index`. */
  partText(index: number): string;
}

/**
 * Where a part stands while the skeleton is parsed: a string of U+0000 and the part's place. JSON
 * writes U+0000 inside a string only as the escape `\u0000`; a skeleton that holds that escape is
 * not parsed this way, so no string of the body is ever taken for a part.
 */
const placeholder = (i: number) => `"\\u0000${i}"`;

/**
 * A body's elements; null for a body that is not a JSON object's text, or whose text around its parts
 * writes a U+0000 (its readers take it whole).
 */
export function bodyElements(body: string | PartedBody): BodyElements | null {
  const parted = typeof body === "string" ? wholeCut(body) : body;
  if (!parted || parted.skeleton.some((text) => text.includes("\\u0000"))) return null;
  const top = JSON.parse(
    joinBody(
      parted.skeleton,
      parted.parts.map((_, i) => placeholder(i)),
    ),
  ) as Record<string, unknown>;
  const arrays = new Map<string, BodyElement[]>();
  let next = 0;
  for (const [name, value] of Object.entries(top)) {
    if (!Array.isArray(value)) continue;
    arrays.set(
      name,
      value.map((element): BodyElement => {
        if (element === `\u0000${next}`) {
          const part = next++;
          const hash = parted.parts[part]!;
          return { key: hash, text: () => parted.partText(hash), part };
        }
        const text = JSON.stringify(element);
        return { key: `=${text}`, text: () => text };
      }),
    );
    delete top[name];
  }
  return { top, arrays, skeleton: parted.skeleton, partText: (index) => parted.partText(parted.parts[index]!) };
}

/** A body stored whole, cut as a parted one is; each part named by its own text. */
function wholeCut(body: string): PartedBody | null {
  const cut = cutElements(body);
  if (!cut) return null;
  const keys = cut.parts.map((text) => `=${text}`);
  const texts = new Map(keys.map((key, i) => [key, cut.parts[i]!]));
  return { skeleton: cut.skeleton, parts: keys, partText: (key) => texts.get(key)! };
}

/** The elements' JSON as the wire body holds one array: a body of that array alone, for a codec to read. */
export function bodyOfElements(name: string, elements: readonly string[], top: Record<string, unknown> = {}): string {
  const fields = Object.keys(top).length > 0 ? `${JSON.stringify(top).slice(1, -1)},` : "";
  return `{${fields}${JSON.stringify(name)}:[${elements.join(",")}]}`;
}
