/**
 * Where two wire bodies differ outside the three parts `diff` already compares (tools, system,
 * messages): every other field — `metadata`, `thinking`, `output_config`, sampling parameters,
 * `stream_options`… — with its path and both values. Fields a user names as changing every run
 * (ids, timestamps) are matched by path patterns and set apart, never reported as changes.
 */
import { bodyElements, joinedBody } from "../body-elements.js";
import type { PartedBody } from "../load-run.js";

/** One field that differs: its path (`metadata.user_id`, `tools_choice[0].type`) and each side's value (undefined: absent). */
export interface FieldChange {
  path: string;
  a: unknown;
  b: unknown;
}

/**
 * The body keys that hold the parts, per API (tools; system: `system`, `instructions`,
 * `systemInstruction`; messages: `messages`, `input`, `contents`): compared part by part elsewhere.
 */
const PART_KEYS = new Set([
  "tools",
  "system",
  "messages",
  "instructions",
  "input",
  "systemInstruction",
  "system_instruction",
  "contents",
]);

/** At most this many changes are listed per request; the rest are counted. */
export const FIELDS_LISTED = 20;

/** A path's segments: `a.b[0].c` → a, b, 0, c. */
function segmentsOf(path: string): string[] {
  return path
    .replace(/\[(\d+|\*)\]/g, ".$1")
    .split(".")
    .filter((s) => s !== "");
}

/**
 * Tells whether a field's path is one the user set apart: a pattern is a path whose segments may be
 * `*` (any one key or index), and it covers everything under it (`metadata` covers `metadata.user_id`).
 */
export type FieldFilter = (path: string) => boolean;

export function fieldFilter(patterns: string[]): FieldFilter {
  const compiled = patterns.map(segmentsOf).filter((p) => p.length > 0);
  if (compiled.length === 0) return () => false;
  return (path) => {
    const segments = segmentsOf(path);
    return compiled.some(
      (pattern) => pattern.length <= segments.length && pattern.every((s, i) => s === "*" || s === segments[i]),
    );
  };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function childPath(path: string, key: string | number): string {
  if (typeof key === "number") return `${path}[${key}]`;
  return path === "" ? key : `${path}.${key}`;
}

function collect(a: unknown, b: unknown, path: string, out: FieldChange[]): void {
  if (isObject(a) && isObject(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])];
    for (const key of keys) {
      if (path === "" && PART_KEYS.has(key)) continue;
      collect(a[key], b[key], childPath(path, key), out);
    }
    return;
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.max(a.length, b.length); i++) collect(a[i], b[i], childPath(path, i), out);
    return;
  }
  if (JSON.stringify(a) !== JSON.stringify(b)) out.push({ path, a, b });
}

/**
 * A body's fields outside the parts, as its JSON has them, in its order: read from the text around
 * its stored parts (a long array's elements parsed one by one), never from the messages, tools or
 * system it sends.
 */
function fieldsOutsideParts(body: string | PartedBody): unknown {
  const elements = bodyElements(body);
  if (!elements) return JSON.parse(joinedBody(body));
  const fields: Record<string, unknown> = {};
  for (const key of elements.keys) {
    if (PART_KEYS.has(key)) continue;
    const list = elements.arrays.get(key);
    fields[key] = list ? list.map((element) => JSON.parse(element.text()) as unknown) : elements.top[key];
  }
  return fields;
}

/** The fields of two bodies (as stored) that differ outside the parts, the ones `ignore` matches set apart. */
export function bodyFieldChanges(
  bodyA: string | PartedBody,
  bodyB: string | PartedBody,
  ignore: FieldFilter,
): { changes: FieldChange[]; ignored: string[] } {
  const all: FieldChange[] = [];
  collect(fieldsOutsideParts(bodyA), fieldsOutsideParts(bodyB), "", all);
  const changes: FieldChange[] = [];
  const ignored: string[] = [];
  for (const change of all) {
    if (ignore(change.path)) ignored.push(change.path);
    else changes.push(change);
  }
  return { changes, ignored };
}

/** A value as a diff line shows it: its JSON, cut at `max` characters; `absent` for a missing field. */
export function fieldValue(value: unknown, max = 60): string {
  if (value === undefined) return "absent";
  const json = JSON.stringify(value);
  return json.length > max ? `${json.slice(0, max - 1)}…` : json;
}
