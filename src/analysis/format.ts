import type { RecordSummary } from "../capture/run-index.js";
import type { RequestRecord } from "../capture/types.js";
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
 * The request's prefix against the previous loop request, in a few words: `first`, `kept 5647 B`,
 * or where and why it broke with the part that was still shared. Non-loop requests are not compared.
 */
export function prefixSummary(r: RecordSummary): string {
  const provider = providerSummary(r);
  return provider ? `${locatorSummary(r)}; ${provider}` : locatorSummary(r);
}

/** Our prefix locator's side of prefixSummary. */
function locatorSummary(r: RecordSummary): string {
  const p = r.prefix;
  if (r.kind !== "loop" || p === null) return "—";
  const shared = `${p.sharedBytes} B${sharedTokensOf(r) === null ? "" : `/${sharedTokensOf(r)} tok`}`;
  if (p.breakAt === null) return p.sharedBytes === 0 ? "first" : `kept ${shared}`;
  return `breaks in ${p.breakAt}: ${p.breakDetail} (shared ${shared})`;
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
