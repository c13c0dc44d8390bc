/**
 * A Messages body's page items made once per distinct part of the run (body-elements.ts): each tool
 * definition, system block and message is taken apart, hashed for the page and counted the first
 * time the run sends it, and every later request that sends it again is a walk over keys.
 *
 * The body's frame (the wire body with its segments cut out) is made from the text around its parts
 * with each part's piece put in: a hole where the part is a segment exactly as the page puts it back.
 * A body this cannot make so (a short element left in the skeleton, a `system` sent as one string, a
 * segment whose text is not its part's) has its frame made whole, as any other API's is.
 */
import { joinBody } from "../../capture/body-parts.js";
import { codecFor } from "../../providers/codecs.js";
import type { WireDissection } from "../../providers/types.js";
import { type BodyElement, type BodyElements, bodyElements, bodyOfElements } from "../body-elements.js";
import type { PartedBody } from "../load-run.js";

/** The page's items a body's segments become (view-data.ts, ItemTable). */
export interface SegmentItems {
  tool(name: string, json: string): number;
  systemPart(text: string): number;
  message(role: string, json: string): number;
}

/** A part as the page holds it: its item, and its piece of a frame (null: the frame is made whole). */
interface PartItem {
  id: number;
  piece: string | null;
}

/** Which of the body's arrays become which items, in cache order, and the letter of their holes. */
const ARRAYS = [
  { name: "tools", hole: "T" },
  { name: "system", hole: "S" },
  { name: "messages", hole: "M" },
] as const;

type ArrayName = (typeof ARRAYS)[number]["name"];

/**
 * The segments of a Messages body as item ids, each kind made when asked for (the page's items take
 * their ids in the order they are asked for, as a body taken apart whole gives them), and its frame
 * when the parts make it (after the segments).
 */
export interface BodyItems {
  tools(): number[];
  system(): number[];
  messages(): Iterable<number>;
  frame(): string | null;
}

const codec = () => codecFor("anthropic-messages");

export class PartItems {
  /** Each element's item by its key, one table per array. */
  private readonly known: Record<ArrayName, Map<string, PartItem>> = {
    tools: new Map(),
    system: new Map(),
    messages: new Map(),
  };

  constructor(
    private readonly items: SegmentItems,
    /** What stands for a segment in a frame (view-data.ts's hole and the segment's letter). */
    private readonly hole: (letter: string) => string,
  ) {}

  /** A Messages body's items; null for a body its elements do not describe (the caller takes it whole). */
  of(body: string | PartedBody): BodyItems | null {
    const elements = bodyElements(body);
    if (!elements) return null;
    let around: WireDissection | null = null;
    const aroundOf = () => (around ??= codec().dissect(JSON.stringify(elements.top)));
    const ids = (name: ArrayName) => {
      const list = elements.arrays.get(name);
      return list ? list.map((element) => this.itemOf(name, element).id) : this.aroundItems(name, aroundOf());
    };
    const self = this;
    return {
      tools: () => ids("tools"),
      system: () => ids("system"),
      *messages() {
        const list = elements.arrays.get("messages");
        if (!list) yield* self.aroundItems("messages", aroundOf());
        else for (const element of list) yield self.itemOf("messages", element).id;
      },
      frame: () => this.frameOf(elements, aroundOf()),
    };
  }

  /**
   * The frame: the text around the parts with each part's piece put in (a part of no segment as it
   * is); null when a segment is no part, or a part's text is not its segment's.
   */
  private frameOf(elements: BodyElements, around: WireDissection): string | null {
    const pieces: (string | undefined)[] = [];
    for (const { name } of ARRAYS) {
      const list = elements.arrays.get(name);
      if (!list) {
        // A segment that is not an array's element has no piece of its own.
        if (this.aroundItems(name, around).length > 0) return null;
        continue;
      }
      for (const element of list) {
        const { piece } = this.itemOf(name, element);
        if (element.part === undefined || piece === null) return null;
        pieces[element.part] = piece;
      }
    }
    const { skeleton } = elements;
    return joinBody(
      skeleton,
      skeleton.slice(1).map((_, i) => pieces[i] ?? elements.partText(i)),
    );
  }

  private aroundItems(name: ArrayName, d: WireDissection): number[] {
    if (name === "tools") return d.tools.map((t) => this.items.tool(t.name, t.json));
    if (name === "system") return d.systemParts.map((text) => this.items.systemPart(text));
    return d.messages.map((m) => this.items.message(m.role, m.json));
  }

  private itemOf(name: ArrayName, element: BodyElement): PartItem {
    let item = this.known[name].get(element.key);
    if (!item) {
      item = this.make(name, element.text());
      this.known[name].set(element.key, item);
    }
    return item;
  }

  /** One element taken apart alone; its piece is a hole where its text is the segment's own. */
  private make(name: ArrayName, text: string): PartItem {
    const d = codec().dissect(bodyOfElements(name, [text]));
    const letter = ARRAYS.find((a) => a.name === name)!.hole;
    if (name === "tools") {
      const tool = d.tools[0]!;
      return { id: this.items.tool(tool.name, tool.json), piece: tool.json === text ? this.hole(letter) : null };
    }
    if (name === "messages") {
      const message = d.messages[0]!;
      const piece = message.json === text ? this.hole(letter) : null;
      return { id: this.items.message(message.role, message.json), piece };
    }
    const part = d.systemParts[0]!;
    // The page puts a system part back as its JSON string, inside its block.
    const needle = JSON.stringify(part);
    const at = text.indexOf(needle);
    const piece =
      needle.length < 3 ? text : at < 0 ? null : text.slice(0, at) + this.hole(letter) + text.slice(at + needle.length);
    return { id: this.items.systemPart(part), piece };
  }
}
