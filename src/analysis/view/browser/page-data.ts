/**
 * The page's data as src/analysis/view/view-data.ts lays it out: the request index, parsed whole before
 * the first drawing, and the item table, whose lines are parsed one at a time when a detail needs them.
 * The saved page holds each of the two gzip'd, in base64 (view-page.ts); the live view fetches them.
 */
import type { ItemOf, ViewItem, ViewMeta, ViewPair, ViewRequest } from "../types.js";
import { pageElement } from "./dom.js";

/** Characters of base64 decoded at a time: whole groups of four, each three bytes. */
const BASE64_SLICE = 1 << 20;

/**
 * The text of one of the saved page's data blocks (`selector`): base64 of gzip, decoded a slice at a
 * time into the browser's DecompressionStream, so neither the zipped bytes nor a long task to decode
 * them all stand between the page and its reader.
 */
export async function unzipBlock(selector: string): Promise<string> {
  const base64 = pageElement(selector).textContent ?? "";
  let at = 0;
  const zipped = new ReadableStream<BufferSource>({
    pull(controller) {
      if (at >= base64.length) {
        controller.close();
        return;
      }
      const binary = atob(base64.slice(at, at + BASE64_SLICE));
      at += BASE64_SLICE;
      const bytes = new Uint8Array(binary.length);
      for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
      controller.enqueue(bytes);
    },
  });
  return new Response(zipped.pipeThrough(new DecompressionStream("gzip"))).text();
}

/** A request of the index with the keys view-data.ts leaves out at their usual value put back. */
export type PageRequest = Omit<ViewRequest, "r" | "k" | "tc" | "mk"> & {
  r: number;
  k: NonNullable<ViewRequest["k"]>;
  tc: string[];
  mk: Record<string, number>;
};

export interface PageIndex {
  meta: ViewMeta;
  requests: PageRequest[];
  /** Diff mode only: the aligned pairs of requests. */
  pairs: ViewPair[] | null;
}

/** One empty list for every request without a tool-set change (most of them). */
const NONE: string[] = [];
Object.freeze(NONE);

/** One of the index's lists, one entry per line: `requests`, or `pairs` in diff mode (else null). */
function section<T>(indexText: string, name: string): T[] | null {
  const head = `\n,"${name}":[\n`;
  const at = indexText.indexOf(head);
  if (at < 0) return null;
  const start = at + head.length;
  return JSON.parse(`[${indexText.slice(start, Math.max(start, indexText.indexOf("\n]", start - 1)))}]`) as T[];
}

export function readIndex(indexText: string): PageIndex {
  const meta = JSON.parse(
    indexText.slice(indexText.indexOf('"meta":') + 7, indexText.indexOf('\n,"requests":[')),
  ) as ViewMeta;
  const requests = section<ViewRequest>(indexText, "requests") ?? [];
  for (const r of requests) {
    r.r ??= 0;
    r.k ??= "loop";
    r.tc ??= NONE;
    r.mk ??= {};
  }
  return { meta, requests: requests as PageRequest[], pairs: section<ViewPair>(indexText, "pairs") };
}

/**
 * The item table: its text may still be on its way (the saved page unzips it after the first drawing);
 * each line is parsed once, when first asked for.
 */
export class Items {
  private text: string | null;
  private offsets: number[] | null = null;
  private readonly cache = new Map<number, ViewItem>();
  /** What to do once the text is here: the last detail asked for before it was. */
  private waiting: (() => void) | null = null;

  constructor(source: string | Promise<string>, failed: (error: unknown) => void) {
    this.text = typeof source === "string" ? source : null;
    if (typeof source !== "string")
      source.then((text) => {
        this.text = text;
        this.waiting?.();
        this.waiting = null;
      }, failed);
  }

  /** Whether the items can be read; if not yet, `then` runs once they can (instead of any earlier one). */
  ready(then: () => void): boolean {
    if (this.text !== null) return true;
    this.waiting = then;
    return false;
  }

  /** The item `id`, which must be of `kind` (what the request's reference says it is). */
  of<K extends ViewItem[0]>(id: number, kind: K): ItemOf<K> {
    const value = this.read(id);
    if (value[0] !== kind) throw new Error(`item ${id} is a ${value[0]}, not a ${kind}`);
    return value as ItemOf<K>;
  }

  private read(id: number): ViewItem {
    const known = this.cache.get(id);
    if (known !== undefined) return known;
    const offsets = this.lineStarts();
    const line = this.text!.slice(offsets[id], offsets[id + 1] - 1);
    // From the second item on, a line starts with the comma that separates it from the one before.
    const value = JSON.parse(line.charCodeAt(0) === 44 ? line.slice(1) : line) as ViewItem;
    this.cache.set(id, value);
    return value;
  }

  private lineStarts(): number[] {
    if (this.offsets) return this.offsets;
    if (this.text === null) throw new Error("the page's texts are not read yet");
    const offsets: number[] = [];
    for (let i = this.text.indexOf("\n"); i >= 0; i = this.text.indexOf("\n", i + 1)) offsets.push(i + 1);
    this.offsets = offsets;
    return offsets;
  }
}
