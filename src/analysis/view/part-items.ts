/**
 * A body's page items made once per distinct part of the run (body-elements.ts): each element of
 * the arrays that hold its segments (element-segments.ts: a message, a tool definition, a system
 * block, an input item, a content) is taken apart, hashed for the page and counted the first time the
 * run sends it, and every later request that sends it again is a walk over keys.
 *
 * The body's frame (the wire body with its segments cut out) is made from the text around its parts
 * with each part's piece put in: the part with a hole where each of its segments' text stands, as
 * the page puts it back; the segments of the fields around the arrays are cut from the text around
 * the parts. A part whose segments are not all its own text (a Responses namespace's first tool is
 * the namespace holding it alone; a developer message of two text parts has the texts joined as its
 * system part) is a piece of the page's own, stored once, with a hole for each segment found in it
 * and a skip for each that is not: the frame holds a hole for the piece, so no frame holds the
 * part's text. A body this cannot make so (a short element in the skeleton or a field around the
 * arrays whose segment is not found, segments out of the order the whole body's cut finds them in)
 * has its frame made whole.
 */
import { joinBody } from "../../capture/body-parts.js";
import type { WireApi } from "../../providers/types.js";
import { type BodyElement, type BodyElements, bodyElements } from "../body-elements.js";
import { aroundSegments, elementSegments, type Segments, segmentArrays } from "../element-segments.js";
import type { PartedBody } from "../load-run.js";

/** The page's items a body's segments become (view-data.ts, ItemTable). */
export interface SegmentItems {
  tool(name: string, json: string): number;
  systemPart(text: string): number;
  message(role: string, json: string): number;
  /** A stored piece (a part's text with holes and skips). */
  piece(text: string): number;
}

type Kind = "tools" | "system" | "messages";

/** The kinds in the order a body's segments are listed and its frame cut. */
const KINDS: readonly Kind[] = ["tools", "system", "messages"];

/** Each kind's letter in a frame's holes, in the order the frame cuts them (view-data.ts, bodyFrame). */
const LETTERS: Record<Kind, string> = { tools: "T", system: "S", messages: "M" };

/** Where a stored piece goes in a frame. */
const PIECE = "P";

/** A segment's skip: the letter of its kind in lower case, which takes the segment and writes nothing. */
const skip = (kind: Kind) => LETTERS[kind].toLowerCase();

/** A segment's text as a frame finds it in the body: a system part as its JSON string. */
function needlesOf(segments: Segments): Record<Kind, string[]> {
  return {
    tools: segments.tools.map((t) => t.json),
    system: segments.systemParts.map((p) => JSON.stringify(p)),
    messages: segments.messages.map((m) => m.json),
  };
}

/**
 * An element's piece of a frame: its text with a hole for each of its segments, put in the frame
 * as it is where each segment is its own text found in order (as the whole body's cut leaves it),
 * else stored once as an item of its own (`id` once made) and the frame holds a hole for it.
 */
interface Piece {
  text: string;
  stored: boolean;
  id?: number;
}

/**
 * An element as the page holds it: how many segments of each kind it has, their items once asked
 * for (the page's items take their ids in the order they are asked for, as a body taken apart whole
 * gives them), and its piece of a frame.
 */
interface PartItem {
  counts: Record<Kind, number>;
  ids: Partial<Record<Kind, number[]>>;
  piece: Piece;
}

/** A body's frame: its text with holes, and the ids of the stored pieces its `P` holes take in order. */
export interface BodyFrame {
  text: string;
  pieces: number[];
}

/** The segments of a body as item ids, each kind made when asked for, and its frame when the parts make it. */
export interface BodyItems {
  tools(): number[];
  system(): number[];
  messages(): Iterable<number>;
  frame(): BodyFrame | null;
}

/**
 * Where a segment's text was found: its unit (the skeleton's text k is unit 2k, part k unit 2k + 1),
 * its start and end there, and its hole's letter.
 */
interface Found {
  unit: number;
  at: number;
  end: number;
  letter: string;
}

export class PartItems {
  /** Each element's item by its key, one table per API and array (a key names content, not what reads it). */
  private readonly known = new Map<string, Map<string, PartItem>>();

  constructor(
    private readonly items: SegmentItems,
    /** What stands for a segment in a frame (view-data.ts's hole and the segment's letter). */
    private readonly hole: (letter: string) => string,
  ) {}

  /** A body's items; null for a body its elements do not describe (the caller takes it whole). */
  of(api: WireApi, body: string | PartedBody): BodyItems | null {
    const elements = bodyElements(body);
    const arrays = elements && segmentArrays(api, elements);
    if (!elements || !arrays) return null;
    let around: Segments | null = null;
    const aroundOf = () => (around ??= aroundSegments(api, elements));
    const self = this;
    function* ids(kind: Kind): Generator<number> {
      yield* self.aroundIds(kind, aroundOf());
      for (const name of arrays!) {
        for (const element of elements!.arrays.get(name) ?? []) yield* self.idsOf(api, name, element, kind);
      }
    }
    return {
      tools: () => [...ids("tools")],
      system: () => [...ids("system")],
      messages: () => ids("messages"),
      frame: () => this.frameOf(api, elements, arrays, aroundOf()),
    };
  }

  private aroundIds(kind: Kind, around: Segments): number[] {
    if (kind === "tools") return around.tools.map((t) => this.items.tool(t.name, t.json));
    if (kind === "system") return around.systemParts.map((text) => this.items.systemPart(text));
    return around.messages.map((m) => this.items.message(m.role, m.json));
  }

  private idsOf(api: WireApi, name: string, element: BodyElement, kind: Kind): number[] {
    let made: Segments | null = null;
    const item = this.itemOf(api, name, element, (segments) => (made = segments));
    if (item.counts[kind] === 0) return [];
    item.ids[kind] ??= this.aroundIds(kind, made ?? elementSegments(api, name, element.text()));
    return item.ids[kind];
  }

  private itemOf(api: WireApi, name: string, element: BodyElement, made?: (s: Segments) => void): PartItem {
    const table = `${api} ${name}`;
    const known = this.known.get(table) ?? new Map<string, PartItem>();
    this.known.set(table, known);
    let item = known.get(element.key);
    if (!item) {
      const text = element.text();
      const segments = elementSegments(api, name, text);
      made?.(segments);
      item = {
        counts: {
          tools: segments.tools.length,
          system: segments.systemParts.length,
          messages: segments.messages.length,
        },
        ids: {},
        piece: this.pieceOf(text, needlesOf(segments)),
      };
      known.set(element.key, item);
    }
    return item;
  }

  /**
   * The element's text with a hole where each of its segments' text stands, found in order, and a
   * skip where one is not found (after the one before it); stored when it has a skip. An element
   * with segments of two kinds (whose order in the whole body's cut is by kind first) is its text
   * after a skip for each, stored. A text under three characters (an empty system part's `""`) is
   * a skip, never a hole, as in the whole body's cut.
   */
  private pieceOf(text: string, needles: Record<Kind, string[]>): Piece {
    const kinds = KINDS.filter((kind) => needles[kind].length > 0);
    if (kinds.length > 1) {
      const skips = kinds.flatMap((kind) => needles[kind].map(() => this.hole(skip(kind))));
      return { text: skips.join("") + text, stored: true };
    }
    const kind = kinds[0];
    if (kind === undefined) return { text, stored: false };
    const found: Found[] = [];
    let from = 0;
    for (const needle of needles[kind]) {
      // A short needle could match inside something else: its text stays, a skip counts it.
      const at = needle.length < 3 ? -1 : text.indexOf(needle, from);
      if (at < 0) {
        found.push({ unit: 0, at: from, end: from, letter: skip(kind) });
        continue;
      }
      from = at + needle.length;
      found.push({ unit: 0, at, end: from, letter: LETTERS[kind] });
    }
    return { text: this.cutOut(text, found), stored: found.some((f) => f.letter !== LETTERS[kind]) };
  }

  /** The text with a hole for each cut, the cuts in order. */
  private cutOut(text: string, cuts: readonly Found[]): string {
    let out = "";
    let pos = 0;
    for (const c of cuts) {
      out += text.slice(pos, c.at) + this.hole(c.letter);
      pos = c.end;
    }
    return out + text.slice(pos);
  }

  /**
   * The frame: the text around the parts with the segments it holds cut out (the fields around the
   * arrays, short elements), and each part's piece put in (a part of no array that holds segments as
   * it is, a stored piece as its hole); null when the parts cannot make it. Each kind's segments are
   * looked for in the order the whole body's cut looks for them (view-data.ts, bodyFrame), each
   * after the one before.
   */
  private frameOf(api: WireApi, elements: BodyElements, arrays: readonly string[], around: Segments): BodyFrame | null {
    const { skeleton } = elements;
    const pieces: (string | undefined)[] = [];
    const stored: Piece[] = [];
    const cuts: Found[] = [];
    const last: Record<Kind, Found | null> = { tools: null, system: null, messages: null };
    const cutFromSkeleton = (needles: Record<Kind, string[]>, within?: number): boolean => {
      for (const kind of KINDS) {
        for (const needle of needles[kind]) {
          // A short needle's skip goes with the next hole of its kind, which may be in another part:
          // the whole body's cut places it (view-data.ts, bodyFrame).
          if (needle.length < 3) return false;
          const place = this.findInSkeleton(skeleton, needle, last[kind], LETTERS[kind], within);
          if (!place) return false;
          last[kind] = place;
          cuts.push(place);
        }
      }
      return true;
    };
    if (!cutFromSkeleton(needlesOf(around))) return null;
    for (const name of arrays) {
      for (const element of elements.arrays.get(name) ?? []) {
        const item = this.itemOf(api, name, element);
        const kinds = KINDS.filter((k) => item.counts[k] > 0);
        if (kinds.length === 0) continue;
        if (element.part === undefined) {
          if (!cutFromSkeleton(needlesOf(elementSegments(api, name, element.text())), element.within)) return null;
          continue;
        }
        const unit = 2 * element.part + 1;
        if (kinds.some((kind) => (last[kind]?.unit ?? -1) > unit)) return null;
        for (const kind of kinds) last[kind] = { unit, at: 0, end: 0, letter: "" };
        const { piece } = item;
        pieces[element.part] = piece.stored ? this.hole(PIECE) : piece.text;
        if (piece.stored) stored[element.part] = piece;
      }
    }
    const ordered = cuts.sort((x, y) => x.unit - y.unit || x.at - y.at);
    if (ordered.some((c, i) => i > 0 && c.unit === ordered[i - 1]!.unit && c.at < ordered[i - 1]!.end)) return null;
    const cutSkeleton = skeleton.map((text, i) => {
      const here = ordered.filter((c) => c.unit === 2 * i);
      return here.length === 0 ? text : this.cutOut(text, here);
    });
    const text = joinBody(
      cutSkeleton,
      cutSkeleton.slice(1).map((_, i) => pieces[i] ?? elements.partText(i)),
    );
    // The stored pieces in the order of their holes (the parts'), each an item once per run.
    const ids = stored.flatMap((piece) => {
      piece.id ??= this.items.piece(piece.text);
      return [piece.id];
    });
    return { text, pieces: ids };
  }

  /**
   * The first place of `needle` in the skeleton's texts after `after` (in the text `within` alone
   * when given); null when there is none.
   */
  private findInSkeleton(
    skeleton: readonly string[],
    needle: string,
    after: Found | null,
    letter: string,
    within?: number,
  ): Found | null {
    const first = Math.ceil((after?.unit ?? 0) / 2);
    const [from, to] = within === undefined ? [first, skeleton.length - 1] : [within, within];
    for (let i = Math.max(from, first); i <= to; i++) {
      const start = after && after.unit === 2 * i ? after.end : 0;
      const at = skeleton[i]!.indexOf(needle, start);
      if (at >= 0) return { unit: 2 * i, at, end: at + needle.length, letter };
    }
    return null;
  }
}
