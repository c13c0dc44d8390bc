/**
 * A body's tool definitions and system parts read part by part: what `diff` compares when a prompt or
 * a tool changed, what `check --run` counts of the system text, what `profile import` recovers.
 *
 * These readers want the prompt and not the conversation, yet a whole body is mostly conversation,
 * and it grows with every request. So each distinct element of the arrays that hold segments
 * (element-segments.ts) is taken apart once per reader, and what it adds to the prompt is kept by its
 * key (a message adds nothing, and is kept as that); a body is then the fields around its arrays
 * taken apart and a walk over its elements' keys.
 */
import { codecFor } from "../providers/codecs.js";
import type { WireApi, WireDissection } from "../providers/types.js";
import { bodyElements } from "./body-elements.js";
import { aroundSegments, elementSegments, segmentArrays } from "./element-segments.js";
import type { PartedBody } from "./load-run.js";

/** A body's tools and system parts, as its dissection lists them. */
export type PromptParts = Pick<WireDissection, "tools" | "systemParts">;

const NOTHING: PromptParts = { tools: [], systemParts: [] };

export class PromptReader {
  /** What each element adds to the prompt, by API and array, then by its key. */
  private readonly known = new Map<string, Map<string, PromptParts>>();

  /** The tools and system parts of a body as stored; `whole` joins it, for a body its elements do not describe. */
  of(api: WireApi, body: string | PartedBody, whole: () => string): PromptParts {
    const elements = bodyElements(body);
    const arrays = elements && segmentArrays(api, elements);
    if (!elements || !arrays) return codecFor(api).dissect(whole());
    const around = aroundSegments(api, elements);
    const prompt: PromptParts = { tools: [...around.tools], systemParts: [...around.systemParts] };
    for (const name of arrays) {
      const table = this.tableOf(`${api} ${name}`);
      for (const element of elements.arrays.get(name) ?? []) {
        let adds = table.get(element.key);
        if (!adds) {
          const d = elementSegments(api, name, element.text());
          adds = d.tools.length + d.systemParts.length === 0 ? NOTHING : { tools: d.tools, systemParts: d.systemParts };
          table.set(element.key, adds);
        }
        prompt.tools.push(...adds.tools);
        prompt.systemParts.push(...adds.systemParts);
      }
    }
    return prompt;
  }

  private tableOf(name: string): Map<string, PromptParts> {
    const table = this.known.get(name) ?? new Map<string, PromptParts>();
    this.known.set(name, table);
    return table;
  }
}
