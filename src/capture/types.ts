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
}

export interface PrefixInfo {
  /** Bytes of the cache-order serialization shared with the previous loop request of the run. */
  sharedBytes: number;
  breakAt: Part | null;
  /** One readable phrase: where the prefix broke and why (`tools[1] added: a_tool1`). */
  breakDetail: string | null;
}

export interface SystemPartInfo {
  bytes: number;
  sha256: string;
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
  tools: string[];
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
