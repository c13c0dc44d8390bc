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
  /** A short element's place: the index of the skeleton's text that holds it. */
  within?: number;
}

export interface BodyElements {
  /** The body's top-level keys, in the order it has them. */
  keys: string[];
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
 * What stands for a part while the skeleton is parsed: a string of one control character and the
 * part's place. JSON writes a control character inside a string only as an escape (`\u0000`), so
 * one whose escape the skeleton never writes marks the parts and nothing else.
 */
function placeholderMark(skeleton: readonly string[]): string | null {
  for (let code = 0; code < 0x20; code++) {
    const written = `\\u${code.toString(16).padStart(4, "0")}`;
    if (!skeleton.some((text) => text.includes(written))) return written;
  }
  return null;
}

/**
 * A body's elements; null for a body that is not a JSON object's text (or whose text around its
 * parts writes every control character, or that writes an array's key twice), which its readers
 * take whole.
 */
export function bodyElements(body: string | PartedBody): BodyElements | null {
  const parted = typeof body === "string" ? wholeCut(body) : body;
  const mark = parted && placeholderMark(parted.skeleton);
  if (!parted || !mark) return null;
  const top = JSON.parse(
    joinBody(
      parted.skeleton,
      parted.parts.map((_, i) => `"${mark}${i}"`),
    ),
  ) as Record<string, unknown>;
  const marked = JSON.parse(`"${mark}"`) as string;
  const keys = Object.keys(top);
  const arrays = new Map<string, BodyElement[]>();
  let next = 0;
  const elementOf = (element: unknown): BodyElement => {
    if (element === `${marked}${next}`) {
      const part = next++;
      const hash = parted.parts[part]!;
      return { key: hash, text: () => parted.partText(hash), part };
    }
    const text = JSON.stringify(element);
    return { key: `=${text}`, text: () => text, within: next };
  };
  for (const name of keys) {
    const value = top[name];
    if (!Array.isArray(value)) continue;
    arrays.set(name, value.map(elementOf));
    delete top[name];
  }
  // A key the body writes twice keeps its last value: the parts of the first are in no array.
  if (next !== parted.parts.length) return null;
  return { keys, top, arrays, skeleton: parted.skeleton, partText: (index) => parted.partText(parted.parts[index]!) };
}

/** The body's text again from its parts (not checked against its hash: for a reader's rare way round). */
export function joinedBody(body: string | PartedBody): string {
  return typeof body === "string" ? body : joinBody(body.skeleton, body.parts.map(body.partText));
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
