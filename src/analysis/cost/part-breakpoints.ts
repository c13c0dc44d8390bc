/**
 * Where a Messages body's `cache_control` breakpoints sit, in tokens, worked out once per distinct
 * part of a run.
 *
 * A breakpoint's tokens are the prefix up to its segment: the sum of every tool, system part and
 * message before it. Each of those sums is made of per-segment figures (tokens, and a message's
 * content blocks) that depend on the segment's text alone, so each distinct element of the run is
 * read once (the codec takes it apart as a body of that one element) and its figures are kept by
 * the element's key (body-elements.ts); a body of 1,200 messages is then a walk over 1,200 keys.
 */

import { toolsLoadedBy, unloadedTools } from "../../capture/deferred-tools.js";
import type { TokenCounter } from "../../capture/tokens.js";
import type { Part } from "../../capture/types.js";
import { codecFor } from "../../providers/codecs.js";
import type { CacheBreakpoint, WireApi, WireDissection } from "../../providers/types.js";
import { type BodyElement, type BodyElements, bodyElements, bodyOfElements } from "../body-elements.js";
import { aroundSegments } from "../element-segments.js";
import type { PartedBody } from "../load-run.js";
import type { CacheBreakpointAt } from "./cache-model.js";
import { blockCount, type ConverseFigures, converseFigures, converseWalk } from "./converse-breakpoints.js";

/** A body's segments in the terms its breakpoints are summed in: tokens per segment, blocks per message. */
interface SegmentLayout {
  tools: number[];
  system: number[];
  messages: number[];
  messageBlocks: number[];
  breakpoints: CacheBreakpoint[];
}

const PARTS: Part[] = ["tools", "system", "messages"];

const codec = () => codecFor("anthropic-messages");

/**
 * Prefix tokens up to and including each breakpoint's segment, and its block's place in cache order
 * (a tool and a system part are one block each, a message as many as its content holds). Segments are
 * counted without their `cache_control` markers, as the capture's `sharedTokens` are: a marker moved
 * to the newest message does not change what the provider matches.
 */
export function breakpointTokens(d: WireDissection, counter: TokenCounter): CacheBreakpointAt[] {
  return breakpointsOf(layoutOf(d, counter));
}

/** A deferred tool no message loads counts nothing (capture/deferred-tools.ts); a message's media count by the model's rule. */
function layoutOf(d: WireDissection, counter: TokenCounter): SegmentLayout {
  const count = (kind: Part, text: string) => counter.segmentTokens({ kind, text, model: d.model });
  const unloaded = unloadedTools(d);
  return {
    tools: d.tools.map((t, i) => (unloaded.has(i) ? 0 : count("tools", t.prefixJson ?? t.json))),
    system: d.systemParts.map((text) => count("system", text)),
    messages: d.messages.map((m) => count("messages", m.prefixJson ?? m.json)),
    messageBlocks: d.messages.map((m) => blockCount(m.prefixJson ?? m.json)),
    breakpoints: d.cacheBreakpoints ?? [],
  };
}

function breakpointsOf(layout: SegmentLayout): CacheBreakpointAt[] {
  const { tools, system, messages, messageBlocks } = layout;
  const sum = (values: number[], end = values.length) => values.slice(0, end).reduce((a, b) => a + b, 0);
  const before: Record<Part, number> = { tools: 0, system: sum(tools), messages: sum(tools) + sum(system) };
  const counts: Record<Part, number[]> = { tools, system, messages };
  const blockAt = (b: CacheBreakpoint) =>
    b.part === "tools"
      ? b.index
      : b.part === "system"
        ? tools.length + b.index
        : tools.length + system.length + sum(messageBlocks, b.index) + (b.block ?? 0);
  return layout.breakpoints.map((b) => ({
    tokens: before[b.part] + sum(counts[b.part], b.index + 1),
    ttl: b.ttl,
    block: blockAt(b),
  }));
}

/**
 * What one element adds to its body's layout: its figure (a tool's as loaded), its blocks (a
 * message), its markers (at index 0), the name of a deferred tool, the tools a message loads.
 */
interface ElementFigures {
  tokens: number;
  blocks: number;
  breakpoints: CacheBreakpoint[];
  deferred?: string;
  loads?: string[];
}

type FigureTables = Record<Part, Map<string, ElementFigures>>;

/** Breakpoint tokens of Messages bodies, each distinct element of the run taken apart and counted once. */
export class PartBreakpoints {
  /**
   * Each element's figures by its key, one table per part, per model (a message's media count by its
   * model's rule); a key names content, not where it is sent.
   */
  private readonly figures = new Map<string, FigureTables>();
  /** The same for Converse bodies' system blocks and messages, whose figures are of another shape. */
  private readonly converseFigures = new Map<string, Record<"system" | "messages", Map<string, ConverseFigures>>>();

  constructor(readonly counter: TokenCounter) {}

  /**
   * The breakpoints of a body as stored; one its elements do not describe (no JSON object) is taken
   * whole (`whole` joins it), as the codec takes it.
   */
  of(body: string | PartedBody, whole: () => string, api: WireApi = "anthropic-messages"): CacheBreakpointAt[] {
    const elements = bodyElements(body);
    if (!elements) return breakpointTokens(codecFor(api).dissect(whole()), this.counter);
    if (api === "bedrock-converse") return this.converse(elements);
    // The fields around the arrays, taken apart alone: the model, a `system` sent as one string.
    const aroundDissection = aroundSegments("anthropic-messages", elements);
    const around = layoutOf(aroundDissection, this.counter);
    const tables = this.tablesOf(aroundDissection.model);
    const layout: SegmentLayout = { tools: [], system: [], messages: [], messageBlocks: [], breakpoints: [] };
    const deferred: (string | undefined)[] = [];
    const loaded = new Set<string>();
    for (const part of PARTS) {
      const list = elements.arrays.get(part);
      if (!list) {
        this.addAround(layout, part, around);
        continue;
      }
      list.forEach((element, index) => {
        const figures = this.figuresOf(tables, part, element, aroundDissection.model);
        this.add(layout, part, figures, index);
        if (part === "tools") deferred.push(figures.deferred);
        for (const name of figures.loads ?? []) loaded.add(name);
      });
    }
    // A deferred tool no message of this request loads costs it nothing.
    deferred.forEach((name, i) => {
      if (name !== undefined && !loaded.has(name)) layout.tools[i] = 0;
    });
    const automatic = this.automaticBreakpoint(elements);
    if (automatic) layout.breakpoints.push(automatic);
    return breakpointsOf(layout);
  }

  /** A Converse body: its tools from the fields around the arrays, its system blocks and messages part by part. */
  private converse(elements: BodyElements): CacheBreakpointAt[] {
    const around = aroundSegments("bedrock-converse", elements);
    const tools = layoutOf(around, this.counter);
    const tables = this.converseTablesOf(around.model);
    const figuresOf = (part: "system" | "messages", index: number): ConverseFigures => {
      const element = elements.arrays.get(part)![index]!;
      let figures = tables[part].get(element.key);
      if (!figures) {
        figures = converseFigures(part, element.text(), this.counter, around.model);
        tables[part].set(element.key, figures);
      }
      return figures;
    };
    const last = around.tools.length > 0 ? { part: "tools" as const, index: around.tools.length - 1 } : null;
    const walked = converseWalk(elements, figuresOf, last);
    return breakpointsOf({ ...walked, tools: tools.tools, breakpoints: [...tools.breakpoints, ...walked.breakpoints] });
  }

  private converseTablesOf(model: string): Record<"system" | "messages", Map<string, ConverseFigures>> {
    let tables = this.converseFigures.get(model);
    if (!tables) {
      tables = { system: new Map(), messages: new Map() };
      this.converseFigures.set(model, tables);
    }
    return tables;
  }

  private tablesOf(model: string): FigureTables {
    let tables = this.figures.get(model);
    if (!tables) {
      tables = { tools: new Map(), system: new Map(), messages: new Map() };
      this.figures.set(model, tables);
    }
    return tables;
  }

  private add(layout: SegmentLayout, part: Part, figures: ElementFigures, index: number): void {
    layout[part].push(figures.tokens);
    if (part === "messages") layout.messageBlocks.push(figures.blocks);
    for (const b of figures.breakpoints) layout.breakpoints.push({ ...b, index });
  }

  private addAround(layout: SegmentLayout, part: Part, around: SegmentLayout): void {
    layout[part].push(...around[part]);
    if (part === "messages") layout.messageBlocks.push(...around.messageBlocks);
    layout.breakpoints.push(...around.breakpoints.filter((b) => b.part === part));
  }

  private figuresOf(tables: FigureTables, part: Part, element: BodyElement, model: string): ElementFigures {
    let figures = tables[part].get(element.key);
    if (!figures) {
      figures = this.figuresAlone(part, element.text(), model);
      tables[part].set(element.key, figures);
    }
    return figures;
  }

  /** One element taken apart as a body of its own, with the body's model. */
  private figuresAlone(part: Part, text: string, model: string): ElementFigures {
    const d = codec().dissect(bodyOfElements(part, [text], { model }));
    const count = (segment: string) => this.counter.segmentTokens({ kind: part, text: segment, model: d.model });
    const breakpoints = d.cacheBreakpoints ?? [];
    if (part === "tools") {
      const tool = d.tools[0]!;
      const tokens = count(tool.prefixJson ?? tool.json);
      return { tokens, blocks: 0, breakpoints, ...(tool.deferred ? { deferred: tool.name } : {}) };
    }
    if (part === "system") return { tokens: count(d.systemParts[0] ?? ""), blocks: 0, breakpoints };
    const message = d.messages[0]!;
    const json = message.prefixJson ?? message.json;
    return { tokens: count(json), blocks: blockCount(json), breakpoints, loads: toolsLoadedBy(message.json) };
  }

  /**
   * A top-level `cache_control` (automatic caching) puts a breakpoint on the last message's last
   * block: the codec places it, given that message and the marker.
   */
  private automaticBreakpoint(elements: BodyElements): CacheBreakpoint | null {
    const marker = elements.top.cache_control;
    const messages = elements.arrays.get("messages") ?? [];
    const last = messages.at(-1);
    if (marker === undefined || !last) return null;
    const alone = codec().dissect(bodyOfElements("messages", [last.text()], { cache_control: marker }));
    const automatic = alone.cacheBreakpoints?.at(-1);
    return automatic ? { ...automatic, index: messages.length - 1 } : null;
  }
}

let shared: PartBreakpoints | null = null;

/**
 * The process's one PartBreakpoints: the two runs of a diff (or of `view --diff --cost`) that send
 * the same parts count them once.
 */
export function partBreakpoints(counter: TokenCounter): PartBreakpoints {
  // A part's figures depend on its text and the request's model alone (the tables are by model).
  if (shared?.counter !== counter) shared = new PartBreakpoints(counter);
  return shared;
}
