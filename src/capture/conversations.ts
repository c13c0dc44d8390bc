/**
 * Which conversation each request of a run belongs to: the agent's main one, a subagent it started,
 * or a side call (a session title, a routing or classifier call), told apart at capture time from what
 * the wire says.
 *
 * The wire's own signals come first. Codex and pi name the conversation in `prompt_cache_key`; a
 * Responses turn chained with `previous_response_id` continues the conversation of that response.
 * Claude Code sends its session id (the `x-claude-code-session-id` header, and `session_id` inside
 * `metadata.user_id`), which its subagents and side calls share, so within one session the content
 * decides: a request continues a conversation when it keeps that conversation's system text or its
 * tools, and its messages start with the conversation's last request's messages or with the same first
 * message. A subagent has its own system text and tools; a side call has its own system and no tools.
 */
import type { WireDissection } from "../providers/types.js";
import type { ConversationRef } from "./types.js";

/** What the tracker reads of one request. */
export interface ConversationInput {
  api: string;
  dissection: WireDissection;
  /** A session id from the request's headers (`x-claude-code-session-id`, Codex's `session_id`). */
  sessionHeader?: { name: string; value: string };
}

interface Conversation {
  ref: ConversationRef;
  api: string;
  /** The session id the requests carry ("" when none): its conversations are one agent's. */
  session: string;
  /** The prompt cache key naming this conversation, when its requests carry one. */
  key: string | undefined;
  /** The last request's rendered parts. */
  tools: string;
  system: string;
  messages: string[];
}

const rendered = (part: { json: string; prefixJson?: string }) => part.prefixJson ?? part.json;

export class ConversationTracker {
  private readonly conversations: Conversation[] = [];
  /** The conversation and the request of each response id seen (Responses' `previous_response_id` names one). */
  private readonly byResponse = new Map<string, { conversation: Conversation; seq: number }>();
  /** The conversation, not a side call, of the latest such request of each wire API: the parent of the next one started there. */
  private readonly latest = new Map<string, Conversation>();

  /** The request's conversation (`started`: a new one, this request its first). */
  assign({ api, dissection: d, sessionHeader }: ConversationInput): { ref: ConversationRef; started: boolean } {
    const keys = d.conversationKeys ?? {};
    const tools = d.tools.map(rendered).join("\n");
    const system = d.systemParts.join("\n");
    const messages = d.messages.map(rendered);
    const chained = keys.previousResponseId ? this.byResponse.get(keys.previousResponseId)?.conversation : undefined;
    // A session id names a session of several conversations; a prompt cache key names one conversation.
    const session = sessionHeader?.value ?? keys.session ?? "";
    const key = keys.promptCacheKey;
    const found =
      chained ??
      (key !== undefined
        ? this.conversations.find((c) => c.api === api && c.key === key)
        : this.continued(api, session, tools, system, d));
    const by =
      key !== undefined ? "prompt_cache_key" : (sessionHeader?.name ?? (keys.session ? "metadata.user_id" : ""));
    const conversation = found ?? this.started({ api, session, key }, d, by);
    Object.assign(conversation, { tools, system, messages });
    if (conversation.ref.role !== "side") this.latest.set(api, conversation);
    return { ref: conversation.ref, started: found === undefined };
  }

  /** Tells the tracker the response id of request `seq`, just assigned to `ref`. */
  answered(responseId: string, ref: ConversationRef, seq: number): void {
    const conversation = this.conversations.find((c) => c.ref.id === ref.id);
    if (conversation) this.byResponse.set(responseId, { conversation, seq });
  }

  /** The request whose response a chained request names (`previous_response_id`), when it was seen. */
  chainedTo(d: WireDissection): number | undefined {
    const id = d.conversationKeys?.previousResponseId;
    return id === undefined ? undefined : this.byResponse.get(id)?.seq;
  }

  /**
   * The conversation this request continues, one of its session's: one whose last request's messages
   * it keeps and follows with an assistant turn (the reply to that request: the tools and system may
   * have changed in between, as when an MCP server connects); else one whose system text or tools it
   * keeps and whose last messages, or first message, it starts with. The most messages kept win.
   */
  private continued(api: string, session: string, tools: string, system: string, d: WireDissection) {
    const messages = d.messages.map(rendered);
    let best: Conversation | undefined;
    let bestScore = 0;
    for (let i = this.conversations.length - 1; i >= 0; i--) {
      const c = this.conversations[i]!;
      if (c.api !== api || c.session !== session) continue;
      const kept = c.messages.length > 0 && startsWith(messages, c.messages) ? c.messages.length : -1;
      const replied = kept > 0 && d.messages[kept]?.role === "assistant";
      const sameHead = c.system === system || c.tools === tools;
      if (!replied && !sameHead) continue;
      // More messages kept wins; of as many, the one whose system or tools it keeps too.
      const score = kept * 2 + (sameHead ? 1 : 0);
      if (score > bestScore) {
        best = c;
        bestScore = score;
      } else if (best === undefined && messages.length > 0 && messages[0] === c.messages[0]) best = c;
    }
    return best;
  }

  /**
   * A new conversation. Without tools it is a side call when it asks for a schema-shaped answer (a
   * session title, a routing verdict: Claude Code and the Gemini CLI send theirs before the agent's
   * first turn) or when a conversation with tools is running in its session; else it is a main one
   * of its own (a script's next chat). With tools it is the session's main conversation, or a
   * subagent once the session has one. The parent is the conversation, not a side call, of the
   * latest such request of the session. `by` names the wire signal that told it apart, or content.
   */
  private started(where: Pick<Conversation, "api" | "session" | "key">, d: WireDissection, by: string): Conversation {
    const session = this.conversations.filter((c) => c.api === where.api && c.session === where.session);
    const latest = this.latest.get(where.api);
    const parent = latest?.session === where.session ? latest : null;
    const role: ConversationRef["role"] =
      d.tools.length > 0
        ? session.some((c) => c.ref.role === "main")
          ? "subagent"
          : "main"
        : d.schemaAnswer || session.some((c) => c.tools !== "")
          ? "side"
          : "main";
    const signal = by !== "" && (role === "main" || where.key !== undefined);
    const ref: ConversationRef = {
      id: `c${this.conversations.length + 1}`,
      role,
      ...(parent && role !== "main" ? { parent: parent.ref.id } : {}),
      by: signal ? by : "content",
    };
    const conversation: Conversation = { ref, ...where, tools: "", system: "", messages: [] };
    this.conversations.push(conversation);
    return conversation;
  }
}

function startsWith(messages: string[], head: string[]): boolean {
  if (head.length > messages.length) return false;
  for (let i = 0; i < head.length; i++) if (messages[i] !== head[i]) return false;
  return true;
}
