/**
 * Where a Bedrock Converse body's cache points put their breakpoints, in tokens, worked out once per
 * distinct part of a run (part-breakpoints.ts does the same for Messages bodies).
 *
 * A Converse cache point is an element of its own (a `{"cachePoint":…}` system block or tool entry)
 * or a block inside a message, and it marks the element before it in cache order: its breakpoint may
 * lie in the element before, which another part holds. So each element is taken apart by the codec
 * between two stand-ins: one before it, which a leading cache point marks, and a cache point after
 * it, which says whether the element itself is one a later cache point marks (a message of cache
 * points alone is not). The body's walk then joins the elements' figures in order.
 */
import type { TokenCounter } from "../../capture/tokens.js";
import type { Part } from "../../capture/types.js";
import { codecFor } from "../../providers/codecs.js";
import type { CacheBreakpoint } from "../../providers/types.js";
import { type BodyElements, bodyOfElements } from "../body-elements.js";

/** What one system block or message adds to the walk. */
export interface ConverseFigures {
  /** null: the element is a cache point alone, no segment. */
  tokens: number | null;
  /** A message's content blocks as the cache counts them. */
  blocks: number;
  /** The ttl of each cache point that marks the element before this one. */
  before: string[];
  /** Breakpoints on the element itself (index 0 stands for its own place). */
  own: CacheBreakpoint[];
  /** The block a later cache point marks when this element is the last one before it; null: none. */
  lastBlock: number | null;
}

type ElementPart = Extract<Part, "system" | "messages">;

const codec = () => codecFor("bedrock-converse");

const STAND_INS: Record<ElementPart, { before: string; point: string }> = {
  system: { before: '{"text":"-"}', point: '{"cachePoint":{"type":"default"}}' },
  messages: {
    before: '{"role":"user","content":[{"text":"-"}]}',
    point: '{"role":"user","content":[{"cachePoint":{"type":"default"}}]}',
  },
};

/** Content blocks of a message's JSON: its list's length, or one for a string content. */
export function blockCount(json: string): number {
  const content = (JSON.parse(json) as { content?: unknown }).content;
  return Array.isArray(content) ? Math.max(content.length, 1) : 1;
}

/** One system block or message taken apart between its stand-ins, counted with the body's model. */
export function converseFigures(
  part: ElementPart,
  text: string,
  counter: TokenCounter,
  model: string,
): ConverseFigures {
  const { before, point } = STAND_INS[part];
  const d = codec().dissect(bodyOfElements(part, [before, text, point]));
  const marks = [...(d.cacheBreakpoints ?? [])];
  // The stand-in cache point after the element marks the last element before it.
  const after = marks.pop();
  const count = (segment: string) => counter.segmentTokens({ kind: part, text: segment, model });
  const own = marks.filter((b) => b.index === 1).map((b) => ({ ...b, index: 0 }));
  const figures = { before: marks.filter((b) => b.index === 0).map((b) => b.ttl), own };
  if (part === "system") {
    const segment = d.systemParts[1];
    return {
      ...figures,
      tokens: d.systemParts.length === 2 ? count(segment!) : null,
      blocks: 0,
      lastBlock: after?.index === 1 ? 0 : null,
    };
  }
  const message = d.messages[1]!;
  const json = message.prefixJson ?? message.json;
  return {
    ...figures,
    tokens: count(json),
    blocks: blockCount(json),
    lastBlock: after?.index === 1 ? (after.block ?? 0) : null,
  };
}

/** The walk's layout of a Converse body: tokens per segment, blocks per message, the breakpoints. */
export interface ConverseLayout {
  system: number[];
  messages: number[];
  messageBlocks: number[];
  breakpoints: CacheBreakpoint[];
}

/**
 * Joins the elements' figures in order, each cache point that marks the element before it put on
 * the last element seen (`last`, the around fields' last tool at first).
 */
export function converseWalk(
  elements: BodyElements,
  figuresOf: (part: ElementPart, index: number) => ConverseFigures,
  start: Omit<CacheBreakpoint, "ttl"> | null,
): ConverseLayout {
  const layout: ConverseLayout = { system: [], messages: [], messageBlocks: [], breakpoints: [] };
  let last = start;
  for (const part of ["system", "messages"] as const) {
    const count = elements.arrays.get(part)?.length ?? 0;
    for (let i = 0; i < count; i++) {
      const figures = figuresOf(part, i);
      for (const ttl of figures.before) if (last) layout.breakpoints.push({ ...last, ttl });
      if (figures.tokens === null) continue;
      const index = layout[part].push(figures.tokens) - 1;
      if (part === "messages") layout.messageBlocks.push(figures.blocks);
      for (const b of figures.own) layout.breakpoints.push({ ...b, index });
      if (figures.lastBlock !== null)
        last = part === "system" ? { part, index } : { part, index, block: figures.lastBlock };
    }
  }
  return layout;
}
