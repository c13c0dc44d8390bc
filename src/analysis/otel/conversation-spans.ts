/**
 * The conversations of a run in its trace (issue 34): each chat span names its conversation in
 * `gen_ai.conversation.id`, and each subagent conversation is an `invoke_agent` span of its own that
 * holds its chat spans, under the agent whose conversation was running when it started. Per the
 * OpenTelemetry GenAI semantic conventions v1.41.0, gen-ai-agent-spans.md, "Invoke agent internal
 * span": operation `invoke_agent`, kind INTERNAL, named `invoke_agent` when the agent has no name
 * (a subagent's is not on the wire), `gen_ai.provider.name` required, `gen_ai.conversation.id` and
 * `gen_ai.request.model` when available. Side conversations (titles, routing) stay under the agent
 * that made them, with their own conversation id.
 */

import type { RequestRecord } from "../../capture/types.js";
import { conversationIdOf, providerName } from "./chat-span.js";
import type { SpanPlan } from "./span-plan.js";

/** The span id of a subagent conversation's `invoke_agent` span. */
const subagentSpanId = (conversation: string) => `agent:${conversation}`;

/** The span a request's chat span goes under: its subagent's `invoke_agent` span, else `fallback`. */
export function conversationParent(record: RequestRecord, fallback: string): string {
  return record.conversation?.role === "subagent" ? subagentSpanId(record.conversation.id) : fallback;
}

/**
 * One `invoke_agent` span per subagent conversation, built as the records come (a whole run's export
 * and the live one alike): from its first request's start to its last request's end, in the order
 * the subagents first appear, so a subagent of a subagent comes after its parent. `root` is the run's
 * own agent span.
 */
export class SubagentSpans {
  private readonly spans = new Map<string, SpanPlan>();
  private readonly roles = new Map<string, string>();

  constructor(private readonly root: string) {}

  /**
   * Takes a record and its chat span: a subagent's first request starts its span, which is returned
   * (null otherwise); a later one stretches it, in place.
   */
  take(record: RequestRecord, chat: SpanPlan): SpanPlan | null {
    const conversation = record.conversation;
    if (!conversation) return null;
    this.roles.set(conversation.id, conversation.role);
    if (conversation.role !== "subagent") return null;
    const span = this.spans.get(conversation.id);
    if (span) {
      span.startMs = Math.min(span.startMs, chat.startMs);
      span.endMs = Math.max(span.endMs, chat.endMs);
      (span.attributes["payload_probe.requests"] as number)++;
      return null;
    }
    const parent = conversation.parent;
    const started: SpanPlan = {
      id: subagentSpanId(conversation.id),
      parent: parent !== undefined && this.roles.get(parent) === "subagent" ? subagentSpanId(parent) : this.root,
      name: "invoke_agent",
      kind: "internal",
      startMs: chat.startMs,
      endMs: chat.endMs,
      attributes: {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.provider.name": providerName(record.api),
        "gen_ai.request.model": record.model,
        "gen_ai.conversation.id": conversationIdOf(record),
        "payload_probe.conversation.role": "subagent",
        ...(parent === undefined ? {} : { "payload_probe.conversation.parent": `${record.run}/${parent}` }),
        "payload_probe.conversation.by": conversation.by,
        "payload_probe.requests": 1,
      },
    };
    this.spans.set(conversation.id, started);
    return started;
  }

  all(): SpanPlan[] {
    return [...this.spans.values()];
  }
}

/** The subagent spans of a whole run, `chats[i]` being the chat span of `records[i]`. */
export function planSubagents(records: RequestRecord[], chats: SpanPlan[], root: string): SpanPlan[] {
  const subagents = new SubagentSpans(root);
  for (const [i, record] of records.entries()) subagents.take(record, chats[i]!);
  return subagents.all();
}
