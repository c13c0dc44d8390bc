/**
 * The run index's rows: what `report` and `diff` read of a record (a RecordSummary), in a form that
 * parses several times faster than the record. A long session's record is mostly its roles list,
 * hashes and fields those commands never look at; a row holds the roles that were added since the
 * previous row, the figures that change every request in fixed places, and the rest (tools, model,
 * usage…) only when it differs from the previous row's. So a row reads only after the rows before
 * it, which is how the index is read: from its start, in order.
 *
 * Each row starts with its number (1 for the first record) and the byte offset in requests.jsonl
 * where its record's line ends, so a reader can hold the index against the file and read whatever
 * the index lacks from the file itself.
 *
 * Row (format 2; 1 had no conversation and a prefix of four keys): [n, end, seq, rolesKept, rolesAdded, ts, toolsBytes, toolsChars, systemBytes,
 * systemChars, messagesBytes, messagesChars|null, bodyBytes, bodyChars|null, markers, tokens,
 * prefix, bodyHash, changed?] — `changed` holds the CARRIED values unlike the previous row's (null
 * for an optional one the record lacks). tokens and prefix are arrays of their values when their keys
 * are the ones the capture writes, in its order (FLAT_SHAPES), else the record's object as it is:
 * an array parses faster than an object, and the object comes back with the same keys in the same order.
 */
import { leadingMatch } from "./leading-match.js";
import { RUN_INDEX_FORMAT } from "./run-format.js";
import type { RequestRecord } from "./types.js";

/** What report, diff and the cost model read of a record; the index keeps exactly this. */
export type RecordSummary = Pick<
  RequestRecord,
  | "probe"
  | "seq"
  | "kind"
  | "ts"
  | "api"
  | "model"
  | "tools"
  | "toolsBytes"
  | "toolsChars"
  | "systemBytes"
  | "systemChars"
  | "messagesBytes"
  | "messagesChars"
  | "bodyBytes"
  | "bodyChars"
  | "roles"
  | "markers"
  | "tokens"
  | "usage"
  | "prefix"
  | "hashes"
  | "secrets"
  | "cacheDiagnostics"
  | "conversation"
  | "status"
  | "ending"
  | "error"
>;

/** How the HTTP exchange went (proxy and mock records): what tells a failed request and its reason. */
type Exchange = Pick<RecordSummary, "status" | "ending" | "error">;

/** The index's first line: what it is and its layout's number. */
export const INDEX_HEADER = { runIndex: RUN_INDEX_FORMAT };

/** Values a row repeats only when they change; secrets, cacheDiagnostics and conversation may be absent. */
interface Carried {
  probe: string;
  kind: RequestRecord["kind"];
  api: string;
  model: string;
  tools: string[];
  toolsHash: string;
  systemHash: string;
  usage: RequestRecord["usage"];
  secrets: RequestRecord["secrets"];
  cacheDiagnostics: RequestRecord["cacheDiagnostics"];
  conversation: RequestRecord["conversation"];
  /** The record's status, ending and error as they are (null kept apart from absent); undefined when it has none. */
  exchange: Exchange | undefined;
}

const CARRIED_KEYS = [
  "probe",
  "kind",
  "api",
  "model",
  "tools",
  "toolsHash",
  "systemHash",
  "usage",
  "secrets",
  "cacheDiagnostics",
  "conversation",
  "exchange",
] as const;

function carriedOf(r: RecordSummary): Carried {
  return {
    probe: r.probe,
    kind: r.kind,
    api: r.api,
    model: r.model,
    tools: r.tools,
    toolsHash: r.hashes.tools,
    systemHash: r.hashes.system,
    usage: r.usage,
    secrets: r.secrets,
    cacheDiagnostics: r.cacheDiagnostics,
    conversation: r.conversation,
    exchange: exchangeOf(r),
  };
}

function exchangeOf(r: RecordSummary): Exchange | undefined {
  const exchange: Exchange = {};
  if (r.status !== undefined) exchange.status = r.status;
  if (r.ending !== undefined) exchange.ending = r.ending;
  if (r.error !== undefined) exchange.error = r.error;
  return Object.keys(exchange).length > 0 ? exchange : undefined;
}

const FIXED_CELLS = 18;

/** The keys, in order, of the objects a row keeps as arrays of their values. */
const FLAT_SHAPES = {
  tokens: ["encoding", "tools", "system", "messages", "total"],
  prefix: ["sharedBytes", "breakAt", "breakDetail", "sharedTokens", "from", "newConversation"],
} as const;

function flattened(value: object | null, keys: readonly string[]): unknown {
  if (value === null) return null;
  const own = Object.keys(value);
  if (own.length !== keys.length || own.some((key, i) => key !== keys[i])) return value;
  return keys.map((key) => (value as Record<string, unknown>)[key]);
}

function unflattened(cell: unknown, keys: readonly string[]): unknown {
  if (!Array.isArray(cell)) return cell;
  const value: Record<string, unknown> = {};
  for (let i = 0; i < keys.length; i++) value[keys[i]!] = cell[i];
  return value;
}

/** Encodes the records of one run in order: each row says what changed since the one before. */
export function indexRowEncoder(): (record: RecordSummary, end: number) => string {
  let n = 0;
  let roles: string[] = [];
  let carried: Record<string, string | undefined> = {};
  return (r, end) => {
    const kept = leadingMatch(roles, r.roles);
    roles = r.roles;
    const values = carriedOf(r);
    const now: Record<string, string | undefined> = {};
    const changed: Record<string, unknown> = {};
    let anyChanged = false;
    for (const key of CARRIED_KEYS) {
      const json = values[key] === undefined ? undefined : JSON.stringify(values[key]);
      now[key] = json;
      if (json !== carried[key]) {
        changed[key] = values[key] ?? null;
        anyChanged = true;
      }
    }
    carried = now;
    const row: unknown[] = [
      ++n,
      end,
      r.seq,
      kept,
      r.roles.slice(kept),
      r.ts,
      r.toolsBytes,
      r.toolsChars,
      r.systemBytes,
      r.systemChars,
      r.messagesBytes,
      r.messagesChars ?? null,
      r.bodyBytes,
      r.bodyChars ?? null,
      r.markers,
      flattened(r.tokens, FLAT_SHAPES.tokens),
      flattened(r.prefix, FLAT_SHAPES.prefix),
      r.hashes.body,
    ];
    if (anyChanged) row.push(changed);
    return JSON.stringify(row);
  };
}

export interface IndexRow {
  /** The row's number: the record is the n-th line of requests.jsonl. */
  n: number;
  /** Where the record's line ends in requests.jsonl (the offset after its newline). */
  end: number;
  summary: RecordSummary;
}

/**
 * Decodes the rows of one index in order; null for a row that is not one (a torn or corrupt line),
 * after which the decoder is not to be used again.
 */
export function indexRowDecoder(): (row: unknown) => IndexRow | null {
  let roles: string[] = [];
  let carried: Partial<Carried> = {};
  return (row) => {
    if (!isRowShape(row) || row[3] > roles.length) return null;
    const changed = row[FIXED_CELLS] as Partial<Record<keyof Carried, unknown>> | undefined;
    if (changed) carried = withChanges(carried, changed);
    if (carried.probe === undefined || carried.tools === undefined || carried.toolsHash === undefined) return null;
    const added = row[4];
    // A row that adds no role and keeps them all shares the previous row's list.
    if (row[3] < roles.length || added.length > 0) roles = roles.slice(0, row[3]).concat(added);
    return { n: row[0], end: row[1], summary: summaryOf(row, roles, carried as Carried) };
  };
}

function withChanges(carried: Partial<Carried>, changed: Partial<Record<keyof Carried, unknown>>): Partial<Carried> {
  const next: Record<string, unknown> = { ...carried };
  for (const key of CARRIED_KEYS) {
    if (!(key in changed)) continue;
    const value = changed[key];
    // null stands for an absent optional value; usage is the one carried value that may be null.
    next[key] = value === null && key !== "usage" ? undefined : value;
  }
  return next as Partial<Carried>;
}

function summaryOf(row: unknown[], roles: string[], c: Carried): RecordSummary {
  const summary: RecordSummary = {
    probe: c.probe,
    seq: row[2] as number,
    kind: c.kind,
    ts: row[5] as string,
    api: c.api,
    model: c.model,
    tools: c.tools,
    toolsBytes: row[6] as number,
    toolsChars: row[7] as number,
    systemBytes: row[8] as number,
    systemChars: row[9] as number,
    messagesBytes: row[10] as number,
    messagesChars: (row[11] as number | null) ?? undefined,
    bodyBytes: row[12] as number,
    bodyChars: (row[13] as number | null) ?? undefined,
    roles,
    markers: row[14] as RecordSummary["markers"],
    tokens: unflattened(row[15], FLAT_SHAPES.tokens) as RecordSummary["tokens"],
    usage: c.usage,
    prefix: unflattened(row[16], FLAT_SHAPES.prefix) as RecordSummary["prefix"],
    hashes: { tools: c.toolsHash, system: c.systemHash, body: row[17] as string },
  };
  if (c.secrets) summary.secrets = c.secrets;
  if (c.cacheDiagnostics) summary.cacheDiagnostics = c.cacheDiagnostics;
  if (c.conversation) summary.conversation = c.conversation;
  if (c.exchange) Object.assign(summary, c.exchange);
  return summary;
}

/** The cells a decoder relies on, checked so a corrupt row is refused instead of misread. */
function isRowShape(row: unknown): row is [number, number, number, number, string[], ...unknown[]] {
  if (!Array.isArray(row) || (row.length !== FIXED_CELLS && row.length !== FIXED_CELLS + 1)) return false;
  const changed = row[FIXED_CELLS];
  return (
    typeof row[0] === "number" &&
    typeof row[1] === "number" &&
    typeof row[2] === "number" &&
    Number.isInteger(row[3]) &&
    row[3] >= 0 &&
    Array.isArray(row[4]) &&
    typeof row[5] === "string" &&
    typeof row[6] === "number" &&
    typeof row[8] === "number" &&
    typeof row[10] === "number" &&
    typeof row[12] === "number" &&
    typeof row[14] === "object" &&
    row[14] !== null &&
    typeof row[15] === "object" &&
    typeof row[16] === "object" &&
    typeof row[17] === "string" &&
    (changed === undefined || (typeof changed === "object" && changed !== null && !Array.isArray(changed)))
  );
}
