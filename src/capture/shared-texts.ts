/**
 * One string object for each distinct text of a run's dissections. An agent sends its conversation
 * again with every request, so request 600 repeats 1,200 messages that earlier requests sent, each
 * parsed into a new string. Compared across requests (the cache reader checks each request against
 * up to 32 live ones, segment by segment) and looked up in memos (token counts, the context
 * sources' shapes), equal but distinct strings are compared character by character and hashed again
 * every time; the same string object is equal at once and keeps the hash V8 stored in it. So each
 * text costs one look-up per request, not one comparison per candidate.
 */
import type { WireDissection } from "../providers/types.js";
import { TextMemo } from "./text-memo.js";

/** What the run's texts may hold before the table starts afresh (texts already shared stay correct). */
const SHARED_MAX_CHARS = 64 * 1024 * 1024;

export class SharedTexts {
  private readonly texts = new TextMemo<string>(SHARED_MAX_CHARS);

  private shared(text: string): string {
    return this.texts.get(text, (first) => first);
  }

  private sharedOptional(text: string | undefined): string | undefined {
    return text === undefined ? undefined : this.shared(text);
  }

  /** The dissection with every segment text (tools, system parts, messages) the run's own object for it. */
  dissection(d: WireDissection): WireDissection {
    return {
      ...d,
      tools: d.tools.map((tool) =>
        withPrefix({ ...tool, json: this.shared(tool.json) }, this.sharedOptional(tool.prefixJson)),
      ),
      systemParts: d.systemParts.map((part) => this.shared(part)),
      messages: d.messages.map((message) =>
        withPrefix({ ...message, json: this.shared(message.json) }, this.sharedOptional(message.prefixJson)),
      ),
    };
  }
}

/** `prefixJson` set only where the dissection had one, so the object's keys stay as they were. */
function withPrefix<T extends { prefixJson?: string }>(item: T, prefixJson: string | undefined): T {
  if (prefixJson !== undefined) item.prefixJson = prefixJson;
  return item;
}
