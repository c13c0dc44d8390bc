import type { RecordSummary } from "../capture/run-index.js";
import type { RequestRecord } from "../capture/types.js";
import { automaticCacheMinimum, automaticCacheRead } from "../providers/cache-rules.js";
import { providerSummary } from "./cache-agreement.js";

/**
 * Roles with the repeating tail folded: `system>user>(assistant>tool)×3`. The full list is in the
 * record; the terminal needs to fit a row.
 */
export function compactRoles(roles: string[]): string {
  const head: string[] = [];
  let i = 0;
  while (i < roles.length && !(roles[i] === "assistant" && roles[i + 1] === "tool")) head.push(roles[i++]!);
  const parts = [...head];
  while (i < roles.length) {
    let pairs = 0;
    while (roles[i] === "assistant" && roles[i + 1] === "tool") {
      pairs++;
      i += 2;
    }
    if (pairs > 0) parts.push(pairs === 1 ? "assistant>tool" : `(assistant>tool)×${pairs}`);
    else parts.push(roles[i++]!);
  }
  return parts.join(">");
}

export function markerSummary(record: Pick<RequestRecord, "markers">): string {
  return Object.entries(record.markers)
    .map(([name, count]) => `${name}=${count}`)
    .join(" ");
}

/** The four sizes a record gives, in UTF-8 bytes or (`--chars`) string lengths. */
export type SizeUnit = "bytes" | "chars";

export interface PartSizes {
  tools: number;
  system: number;
  /** Null when the record predates the field (older records carry no chars of these two). */
  messages: number | null;
  body: number | null;
}

export function partSizes(r: RecordSummary, unit: SizeUnit): PartSizes {
  if (unit === "bytes")
    return { tools: r.toolsBytes, system: r.systemBytes, messages: r.messagesBytes, body: r.bodyBytes };
  return { tools: r.toolsChars, system: r.systemChars, messages: r.messagesChars ?? null, body: r.bodyChars ?? null };
}

/**
 * The request's conversation and what it read from the provider's cache, in a few words:
 * `c1: kept 5647 B/1282 tok from #2`, `c2 subagent: new conversation`, or where and why it broke
 * against the request it was read from; the provider's word when it gave one.
 */
export function prefixSummary(r: RecordSummary): string {
  const provider = providerSummary(r);
  const ours = `${conversationLabel(r)}${locatorSummary(r)}`;
  return provider ? `${ours}; ${provider}` : ours;
}

/**
 * A request's kind as shown: a loop request of a side conversation (a title, a routing call) reads as
 * side, whatever path the proxy took it by; a sampling request stays sampling.
 */
export function kindLabel(r: Pick<RecordSummary, "kind" | "conversation">): RecordSummary["kind"] {
  return r.kind === "loop" && r.conversation?.role === "side" ? "side" : r.kind;
}

/** `c1: ` for the main conversation, `c2 subagent: `, `c3 side: ` (empty for a record from before conversations). */
function conversationLabel(r: Pick<RecordSummary, "conversation">): string {
  const c = r.conversation;
  if (!c) return "";
  return c.role === "main" ? `${c.id}: ` : `${c.id} ${c.role}: `;
}

/** Our prefix locator's side of prefixSummary. */
function locatorSummary(r: RecordSummary): string {
  const p = r.prefix;
  // Before `from` was recorded only loop requests were compared, with the previous loop request.
  if (p === null || (p.from === undefined && r.kind !== "loop")) return "—";
  const shared = `${p.sharedBytes} B${sharedTokensOf(r) === null ? "" : `/${sharedTokensOf(r)} tok`}`;
  const from = typeof p.from === "number" ? ` from #${p.from}` : "";
  if (p.newConversation) return p.sharedBytes > 0 ? `new conversation, shares ${shared}${from}` : "new conversation";
  if (p.from === null) return "nothing cached (none of its model within the cache's lifetime)";
  if (p.breakAt === null) return p.sharedBytes === 0 ? "first" : `kept ${shared}${from}`;
  const against = typeof p.from === "number" ? ` (vs #${p.from})` : "";
  return `breaks in ${p.breakAt}${against}: ${p.breakDetail} (shared ${shared})`;
}

/**
 * What OpenAI's or Gemini's automatic cache reads of the shared tokens, where its documented rules
 * read less than is shared (providers/cache-rules.ts, as the cost model reads): `; the provider
 * reads 1280 tok (128-token steps)`, `; the provider reads none: under its 1024-token minimum`;
 * empty otherwise (Anthropic's reads follow its breakpoints: `report --cost`).
 */
export function automaticReadNote(r: RecordSummary): string {
  const shared = sharedTokensOf(r);
  const read = shared === null || r.prefix?.from === undefined ? null : automaticCacheRead(r.api, r.model, shared);
  if (read === null || read === shared) return "";
  if (read === 0) return `; the provider reads none: under its ${automaticCacheMinimum(r.api, r.model)}-token minimum`;
  return `; the provider reads ${read} tok (128-token steps)`;
}

/** Shared prefix tokens, stored beside sharedBytes when the capture counted tokens. */
export function sharedTokensOf(r: RecordSummary): number | null {
  const tokens = (r.prefix as { sharedTokens?: unknown } | null)?.sharedTokens;
  return typeof tokens === "number" ? tokens : null;
}

/** `+12` / `-3` / `0`, the sign always shown so a column of deltas reads at a glance. */
export function signed(n: number): string {
  return n > 0 ? `+${n}` : `${n}`;
}

/** A markdown table cell: pipes escaped, line breaks flattened. */
export function mdCell(value: unknown): string {
  return String(value ?? "")
    .replace(/\|/g, "\\|")
    .replace(/\r?\n/g, " ");
}

export function mdRow(cells: unknown[]): string {
  return `| ${cells.map(mdCell).join(" | ")} |`;
}

export function mdHeader(head: string[]): string {
  return `${mdRow(head)}\n|${head.map(() => "---").join("|")}|`;
}
