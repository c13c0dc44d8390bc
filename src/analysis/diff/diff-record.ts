/**
 * What `diff` reads of a request record, and nothing more: a record of a long session is mostly its
 * roles list and bookkeeping a diff never looks at, so one user turn of each run is held small.
 */
import type { RecordSummary } from "../../capture/run-index.js";
import type { RequestRecord } from "../../capture/types.js";
import { prefixSummary } from "../format.js";

export interface DiffRecord {
  seq: number;
  kind: RequestRecord["kind"];
  probe: string;
  tools: string[];
  /** The roles joined by `>`: all a diff compares and shows of them. */
  roles: string;
  /** How many user messages the request carries: its user turn, for a loop request. */
  userMessages: number;
  markers: Record<string, number>;
  bytes: { tools: number; system: number; messages: number; body: number };
  tokens: { tools: number; system: number; messages: number; total: number } | null;
  prefix: RequestRecord["prefix"];
  /** prefixSummary of the record, made where the record is read. */
  prefixSummary: string;
  hashes: RequestRecord["hashes"];
}

/** Equal one level deep: arrays or objects of primitives, keys in the same order. */
export function shallowEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (
    typeof a !== "object" ||
    typeof b !== "object" ||
    a === null ||
    b === null ||
    Array.isArray(a) !== Array.isArray(b)
  )
    return false;
  const primitive = (value: unknown) => typeof value !== "object" || value === null;
  if (Array.isArray(a)) {
    const list = b as unknown[];
    if (a.length !== list.length) return false;
    for (let i = 0; i < a.length; i++) if (a[i] !== list[i] || !primitive(a[i])) return false;
    return true;
  }
  const keysA = Object.keys(a);
  const keysB = Object.keys(b);
  if (keysA.length !== keysB.length) return false;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  for (let i = 0; i < keysA.length; i++) {
    const key = keysA[i]!;
    if (key !== keysB[i] || x[key] !== y[key] || !primitive(x[key])) return false;
  }
  return true;
}

/**
 * Projects the records of one run in order. A tool list or marker set equal to the previous
 * record's is that same object, so a diff compares most of them by identity.
 */
export function diffRecordProjector(): (r: RecordSummary) => DiffRecord {
  let tools: string[] = [];
  let markers: Record<string, number> = {};
  return (r) => {
    if (!shallowEqual(tools, r.tools)) tools = r.tools;
    if (!shallowEqual(markers, r.markers)) markers = r.markers;
    let userMessages = 0;
    for (const role of r.roles) if (role === "user") userMessages++;
    return {
      seq: r.seq,
      kind: r.kind,
      probe: r.probe,
      tools,
      roles: r.roles.join(">"),
      userMessages,
      markers,
      bytes: { tools: r.toolsBytes, system: r.systemBytes, messages: r.messagesBytes, body: r.bodyBytes },
      tokens: r.tokens,
      prefix: r.prefix,
      prefixSummary: prefixSummary(r),
      hashes: r.hashes,
    };
  };
}
