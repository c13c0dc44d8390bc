/** The record of one provider request, derived from its wire body alone. */

import type { Usage } from "../providers/types.js";

export interface TokenCounts {
  encoding: string;
  tools: number;
  system: number;
  messages: number;
  total: number;
}

/**
 * The three parts of a request, in the order providers cache a prompt prefix: tool definitions, the
 * system text, the messages. Prefix breaks, token counts, markers and diffs all name parts this way.
 */
export type Part = "tools" | "system" | "messages";

/** One piece of a request in cache order: a tool definition's JSON, a system part, a message's JSON. */
export interface CacheSegment {
  kind: Part;
  text: string;
  /** The request's model, which prices an OpenAI image in a message (providers/media-rules.ts). */
  model?: string;
  /** A deferred tool no message has loaded: sent, but not in the model's context (deferred-tools.ts). */
  unloaded?: true;
}

/**
 * What the provider can read from its prompt cache for a request: the prefix it shares with the
 * earlier request of its API and model, still within the cache's lifetime, that shares the most
 * (capture/cache-reader.ts). Records written before `from` compared with the previous loop request.
 */
export interface PrefixInfo {
  /** Bytes of the cache-order serialization shared with request `from`. */
  sharedBytes: number;
  breakAt: Part | null;
  /** One readable phrase: where the prefix broke and why (`tools[1] added: a_tool1`), against request `from`. */
  breakDetail: string | null;
  /** Tokens shared with request `from` (absent when tokens were not counted). */
  sharedTokens?: number;
  /** The seq of the earlier request read from; null when none of its API and model was still cached. */
  from?: number | null;
  /** The request is its conversation's first: what it shares is read, but nothing it does not is a break. */
  newConversation?: boolean;
}

export interface SystemPartInfo {
  bytes: number;
  sha256: string;
}

/**
 * The conversation a request belongs to within its run: the agent's main one, a subagent it spawned, or a
 * side call (a session title, a routing or classifier call). Requests of one conversation share the id.
 */
export interface ConversationRef {
  /** `c1`, `c2`, … in the order the run's conversations first appear. */
  id: string;
  role: "main" | "subagent" | "side";
  /**
   * The conversation that was running when this one started (subagents and side calls); absent for a
   * main one, and for a side call made before its session's first turn (a session title).
   */
  parent?: string;
  /**
   * What told the conversation apart: a wire signal (`x-claude-code-session-id`, `prompt_cache_key`,
   * `previous_response_id`) or `content` (tools, system, first message).
   */
  by: string;
}

export interface RequestRecord {
  v: 1;
  run: string;
  probe: string;
  seq: number;
  kind: "loop" | "sampling" | "side";
  ts: string;
  durationMs: number;
  api: string;
  model: string;
  /** Every tool the body defines, wherever the API carries it (top-level tools, Responses `additional_tools` items, namespaces). */
  tools: string[];
  /** The tools of `tools` sent for a tool search to load (`defer_loading: true`); absent when none were. */
  deferredTools?: string[];
  toolsBytes: number;
  toolsChars: number;
  systemBytes: number;
  systemChars: number;
  /** Bytes and hash of each system part (stable catalog vs dynamic environment, when split). */
  systemParts: SystemPartInfo[];
  messagesBytes: number;
  /** String lengths of the messages and the body, for `report --chars` (absent in records written before v1 had them). */
  messagesChars?: number;
  bodyBytes: number;
  bodyChars?: number;
  roles: string[];
  markers: Record<string, number>;
  tokens: TokenCounts | null;
  /** What the response reported (provider figures or a mock's estimate, per `source`); never our token count. */
  usage: Usage | null;
  prefix: PrefixInfo | null;
  hashes: { tools: string; system: string; body: string };
  response: { kind: "tool_calls" | "text"; calls: string[]; text: string } | null;
  /**
   * Secrets found in the request's and the response's bodies and stored as markers, by kind
   * (absent when none were, or `--keep-secrets` kept them). Sizes, tokens and hashes describe the
   * bodies as sent, before the replacement.
   */
  secrets?: { replaced: number; kinds: Record<string, number> };
  /**
   * How the response came over HTTP (the mock's and proxy's records; absent for in-process runs): its
   * status (null when none came), milliseconds to its first body byte, how it ended, and the error —
   * an error status's body or the transport's failure, cut at 4096 characters.
   */
  status?: number | null;
  firstByteMs?: number | null;
  ending?: ResponseEnding;
  error?: string | null;
  /** What the provider said about its prompt cache for this request (absent when it was not asked). */
  cacheDiagnostics?: CacheDiagnostics;
  /** The conversation the request belongs to (absent in records written before conversations were told apart). */
  conversation?: ConversationRef;
  /**
   * The program that sent it, as its `user-agent` named it (capture/client-agent.ts): `claude-code`,
   * `codex`, `gemini-cli`, `pi`, `sdk/node`…; absent when it named none, and for requests made in process.
   */
  agent?: string;
  /**
   * The request's tokens by where they come from (capture/context-sources.ts: `system[0]`,
   * `tools:builtin`, `mcp:<server>`, `history`, `result:<tool>`, `reasoning`, `overhead`…), adding up
   * to `tokens.total`; absent when tokens were not counted, and in records written before sources were.
   */
  sources?: Record<string, number>;
  /** Each tool definition's tokens, in the order of `tools` (absent when `sources` is). */
  toolTokens?: number[];
  /**
   * `websocket`: a turn of the Responses API over a WebSocket, whose sizes, tokens and hashes describe
   * its request rebuilt whole (src/capture/responses-socket.ts); absent for a request over HTTP.
   */
  transport?: "websocket";
  /** A WebSocket turn's `response.create` message as sent: its bytes (only the new input, `previous_response_id`). */
  sentBytes?: number;
}

/** What a WebSocket turn's client actually sent, beside the request rebuilt from it. */
export interface SocketSent {
  /** The `response.create` message, as text. */
  sent: string;
}

/**
 * The provider's verdict: `hit` (no divergence found), `miss` (with a reason), `first-turn` (Anthropic's
 * opt-in with nothing to compare), `not-found` (the earlier response is unknown or expired), `pending`
 * (the comparison had not finished when the response was sent), `unavailable` (no diagnosis given).
 */
export type CacheVerdict = "hit" | "miss" | "first-turn" | "not-found" | "pending" | "unavailable";

/** Request fields the proxy added to ask for diagnostics, and the response id they compare with. */
export interface AddedDiagnostics {
  fields: string[];
  compareWith: string | null;
}

export interface CacheDiagnostics {
  source: "anthropic" | "openai";
  verdict: CacheVerdict;
  /** The provider's reason for a miss, in its own name (`tools_changed`, `input_changed`…); null otherwise. */
  reason: string | null;
  /** What the reason names in our terms (a request part, or the model), to hold against the prefix locator; null when it names none. */
  part: Part | "model" | null;
  /** The provider's estimate of the tokens not read from the cache because of the miss. */
  missedTokens: number | null;
  /** OpenAI's count of the compared response's reusable prefix. */
  reusableTokens: number | null;
  /** The response id the request compared with (null: a first turn). */
  comparedWith: string | null;
  /** The request fields payload-probe added (`--cache-diagnostics`); absent when the agent asked itself. */
  added?: string[];
  /** Why `--cache-diagnostics` sent the body as the agent did: its field could not be added without changing what the agent wrote. */
  leftAsSent?: string;
  /** The provider's object as it came (null: the response carried none). */
  raw: unknown;
}

/**
 * How a response ended: `complete` — all of it arrived (an SSE stream up to its `[DONE]`);
 * `truncated` — the upstream stopped part-way; `cancelled` — the client left and the upstream call was
 * aborted; `failed` — no response came (the upstream could not be reached).
 */
export type ResponseEnding = "complete" | "truncated" | "cancelled" | "failed";

/**
 * One agent event as a run stores it (events.jsonl and the database's events): its order in the run,
 * the seq of the request it precedes, its type (a tool call, a tool result, an MCP cache or lifecycle
 * event…) and the event's own fields, stored as bodies are (secrets replaced).
 */
export interface AgentEventRow {
  idx: number;
  seq: number;
  type: string;
  [field: string]: unknown;
}

/** Where a marker looks, and what it looks for (a literal string or a regular expression). */
export interface MarkerSpec {
  in: Part;
  match: string | RegExp;
}
