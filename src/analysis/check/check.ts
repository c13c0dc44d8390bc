/**
 * The CI gate on request cost: each request of a probe's run against the committed baseline of
 * that probe (`probes/baselines/<probe>.json`). Names, roles and markers must match exactly; token
 * and byte counts may grow by at most their tolerance (`probes/baselines/tolerances.yaml`: absolute and percent,
 * per metric, per probe). A count that shrinks past its tolerance is reported, never failed: it is
 * a saving to lock in with `--update`.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import type { RequestRecord } from "../../capture/types.js";
import { inputError } from "../../errors.js";
import { readYamlFile } from "../../files/yaml-file.js";
import { cliName } from "../../text/invoked-as.js";

const COUNT_METRICS = [
  "tokens.tools",
  "tokens.system",
  "tokens.messages",
  "tokens.total",
  "bytes.tools",
  "bytes.system",
  "bytes.messages",
  "bytes.body",
] as const;
export type CountMetric = (typeof COUNT_METRICS)[number];

export interface BaselineRequest {
  seq: number;
  kind: RequestRecord["kind"];
  tools: string[];
  roles: string[];
  markers: Record<string, number>;
  tokens: { tools: number; system: number; messages: number; total: number } | null;
  bytes: { tools: number; system: number; messages: number; body: number };
  /** Lines of the system text (a captured run's baseline: read from its wire bodies). */
  systemLines?: number;
  /** The prompt tokens the provider's cache was predicted to read and write (a captured run's baseline). */
  cache?: { read: number; write5m: number; write1h: number };
  /** A captured run's baseline keeps the record's hashes and prefix, so `diff` can take it as a run. */
  hashes?: RequestRecord["hashes"];
  prefix?: RequestRecord["prefix"];
}

/** Most a run may spend: prompt tokens of all its requests, predicted dollars. */
export interface Budget {
  tokens?: number;
  dollars?: number;
}

/** The floor and ceiling a run's prompt cache is held to (cache-gate.ts), kept in its baseline. */
export interface CacheLimitsKept {
  minHitRate?: number;
  maxWriteAmplification?: number;
}

export interface Baseline {
  v: 1;
  probe: string;
  /** The model a captured run's dollars are priced as. */
  model?: string;
  budget?: Budget;
  cacheLimits?: CacheLimitsKept;
  requests: BaselineRequest[];
}

export function baselineOf(probe: string, records: RequestRecord[]): Baseline {
  return {
    v: 1,
    probe,
    requests: records.map((r) => ({
      seq: r.seq,
      kind: r.kind,
      tools: r.tools,
      roles: r.roles,
      markers: r.markers,
      tokens: r.tokens
        ? { tools: r.tokens.tools, system: r.tokens.system, messages: r.tokens.messages, total: r.tokens.total }
        : null,
      bytes: { tools: r.toolsBytes, system: r.systemBytes, messages: r.messagesBytes, body: r.bodyBytes },
    })),
  };
}

export function writeBaseline(path: string, baseline: Baseline): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(baseline, null, 2)}\n`);
}

/**
 * A baseline file, or a UserError saying why it cannot be used (missing, not JSON, wrong shape);
 * `updateCommand` is what writes it, with the options that chose its files.
 */
export function readBaseline(
  path: string,
  probe: string,
  updateCommand = `${cliName()} check ${probe} --update`,
): Baseline {
  if (!existsSync(path))
    throw inputError(path, undefined, `no baseline for probe "${probe}"; run '${updateCommand}' to write it`);
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    throw inputError(path, undefined, `expected a JSON baseline (${(error as Error).message})`);
  }
  const b = value as Baseline;
  if (typeof b !== "object" || b === null || b.v !== 1 || !Array.isArray(b.requests))
    throw inputError(path, undefined, "expected {v: 1, probe, requests: [...]}");
  b.requests.forEach((r, i) => {
    const ok =
      typeof r === "object" &&
      r !== null &&
      typeof r.seq === "number" &&
      Array.isArray(r.tools) &&
      Array.isArray(r.roles) &&
      typeof r.markers === "object" &&
      typeof r.bytes === "object" &&
      r.bytes !== null &&
      (r.tokens === null || typeof r.tokens === "object");
    if (!ok) throw inputError(path, `requests[${i}]`, "expected {seq, kind, tools, roles, markers, tokens, bytes}");
  });
  return b;
}

// ── Tolerances ────────────────────────────────────────────────────────────────────────────────

export interface Tolerance {
  abs: number;
  pct: number;
}

/** Keys are a metric (`tokens.total`) or a whole group (`tokens`, `bytes`). */
type ToleranceTable = Record<string, Tolerance>;

export interface Tolerances {
  default: ToleranceTable;
  probes: Record<string, ToleranceTable>;
}

const EXACT: Tolerance = { abs: 0, pct: 0 };

export function loadTolerances(path: string): Tolerances {
  if (!existsSync(path)) return { default: {}, probes: {} };
  const doc = readYamlFile(path, "tolerances file");
  const top = (doc ?? {}) as Record<string, unknown>;
  for (const key of Object.keys(top))
    if (key !== "default" && key !== "probes") throw inputError(path, key, "unknown field; expected default, probes");
  const probes = (top.probes ?? {}) as Record<string, unknown>;
  return {
    default: toleranceTable(path, "default", top.default),
    probes: Object.fromEntries(
      Object.entries(probes).map(([probe, table]) => [probe, toleranceTable(path, `probes.${probe}`, table)]),
    ),
  };
}

const KEYS = new Set<string>(["tokens", "bytes", ...COUNT_METRICS]);

function toleranceTable(path: string, field: string, value: unknown): ToleranceTable {
  if (value === undefined || value === null) return {};
  if (typeof value !== "object" || Array.isArray(value))
    throw inputError(path, field, "expected a mapping of metric → {abs, pct}");
  const table: ToleranceTable = {};
  for (const [key, t] of Object.entries(value)) {
    const at = `${field}.${key}`;
    if (!KEYS.has(key)) throw inputError(path, at, `unknown metric; expected one of ${[...KEYS].join(", ")}`);
    const spec = (t ?? {}) as Record<string, unknown>;
    for (const k of Object.keys(spec))
      if (k !== "abs" && k !== "pct") throw inputError(path, `${at}.${k}`, "unknown field; expected abs, pct");
    const number = (k: "abs" | "pct") => {
      const v = spec[k] ?? 0;
      if (typeof v !== "number" || v < 0) throw inputError(path, `${at}.${k}`, "expected a number ≥ 0");
      return v;
    };
    table[key] = { abs: number("abs"), pct: number("pct") };
  }
  return table;
}

/** The most specific tolerance: the probe's metric, the probe's group, the default metric, the default group. */
function toleranceFor(tolerances: Tolerances, probe: string, metric: CountMetric): Tolerance {
  const group = metric.split(".")[0]!;
  const own = tolerances.probes[probe] ?? {};
  return own[metric] ?? own[group] ?? tolerances.default[metric] ?? tolerances.default[group] ?? EXACT;
}

function describeTolerance(t: Tolerance): string {
  if (t.abs === 0 && t.pct === 0) return "exact";
  return [t.abs > 0 ? `±${t.abs}` : "", t.pct > 0 ? `±${t.pct}%` : ""].filter(Boolean).join(" or ");
}

// ── Comparison ────────────────────────────────────────────────────────────────────────────────

/** One metric of one request off its baseline (or, with request null, of the whole run). */
export interface Finding {
  probe: string;
  request: number | null;
  metric: string;
  baseline: string;
  actual: string;
  tolerance: string;
}

export interface ProbeCheck {
  probe: string;
  /** `updated`: --update wrote its baseline. `error`: it could not be evaluated. */
  status: "pass" | "regression" | "error" | "updated";
  requests: number;
  regressions: Finding[];
  /** Counts now smaller than the baseline by more than the tolerance. */
  savings: Finding[];
  error?: string;
  /** One line saying what changed, printed before the findings (a captured run's check). */
  summary?: string;
  /** A captured run's check: the price table its dollar figures (budget, what changed) come from. */
  prices?: string;
  /** The command that rewrites this check's baseline, with the options that chose its files. */
  updateCommand?: string;
  /** A check with a budget or cache limits: its figures against them, also on a pass (a trend in CI). */
  figures?: string;
}

export function findingMessage(f: Finding): string {
  const where = f.request === null ? f.probe : `${f.probe} request ${f.request}`;
  return `${where}: ${f.metric} is ${f.actual}, baseline ${f.baseline} (tolerance ${f.tolerance})`;
}

function countOf(r: BaselineRequest, metric: CountMetric): number | null {
  const [group, part] = metric.split(".") as ["tokens" | "bytes", string];
  const counts = r[group] as Record<string, number> | null;
  return counts ? (counts[part] ?? null) : null;
}

const list = (values: string[]) => `[${values.join(", ")}]`;
const markerText = (m: Record<string, number>) =>
  Object.entries(m)
    .map(([k, v]) => `${k}=${v}`)
    .join(" ") || "none";

export function compareWithBaseline(baseline: Baseline, records: RequestRecord[], tolerances: Tolerances): ProbeCheck {
  const probe = baseline.probe;
  const actual = baselineOf(probe, records);
  const regressions: Finding[] = [];
  const savings: Finding[] = [];
  const exact = (request: number | null, metric: string, was: string, now: string) => {
    if (was !== now) regressions.push({ probe, request, metric, baseline: was, actual: now, tolerance: "exact" });
  };
  exact(null, "requests", String(baseline.requests.length), String(actual.requests.length));
  const byseq = new Map(actual.requests.map((r) => [r.seq, r]));
  for (const base of baseline.requests) {
    const now = byseq.get(base.seq);
    if (!now) continue;
    exact(base.seq, "kind", base.kind, now.kind);
    exact(base.seq, "tools", list(base.tools), list(now.tools));
    exact(base.seq, "roles", base.roles.join(">"), now.roles.join(">"));
    exact(base.seq, "markers", markerText(base.markers), markerText(now.markers));
    const broke = newPrefixBreak(
      probe,
      base,
      records.find((r) => r.seq === base.seq),
    );
    if (broke) regressions.push(broke);
    for (const metric of COUNT_METRICS) {
      const was = countOf(base, metric);
      const is = countOf(now, metric);
      if (was === null || is === null) continue;
      const tolerance = toleranceFor(tolerances, probe, metric);
      const allowed = Math.max(tolerance.abs, (tolerance.pct / 100) * was);
      const finding = {
        probe,
        request: base.seq,
        metric,
        baseline: String(was),
        actual: String(is),
        tolerance: describeTolerance(tolerance),
      };
      if (is - was > allowed) regressions.push(finding);
      else if (was - is > allowed) savings.push(finding);
    }
  }
  return {
    probe,
    status: regressions.length > 0 ? "regression" : "pass",
    requests: records.length,
    regressions,
    savings,
  };
}

/**
 * The request's cache prefix breaks where its baseline's did not (a timestamp in the system prompt, a
 * tool list that changes order): a new break re-bills what the provider had cached, so it fails by
 * default. Only a baseline that kept the prefix (every one `--update` writes now) can say.
 */
export function newPrefixBreak(
  probe: string,
  base: BaselineRequest,
  now: { seq: number; prefix?: RequestRecord["prefix"] } | undefined,
): Finding | null {
  if (base.prefix === undefined || !now?.prefix?.breakAt) return null;
  if (base.prefix?.breakAt === now.prefix.breakAt) return null;
  // Worded to read after "<metric> is": `cache prefix is broken in system: …, baseline kept`.
  const was = base.prefix?.breakAt ? `broken in ${base.prefix.breakAt}` : "kept";
  const detail = now.prefix.breakDetail ? `: ${now.prefix.breakDetail}` : "";
  return {
    probe,
    request: now.seq,
    metric: "cache prefix",
    baseline: was,
    actual: `broken in ${now.prefix.breakAt}${detail}`,
    tolerance: "exact",
  };
}

/** A probe that could not be evaluated: it failed to run, or its baseline is missing or corrupt. */
export function errorCheck(probe: string, error: unknown): ProbeCheck {
  return {
    probe,
    status: "error",
    requests: 0,
    regressions: [],
    savings: [],
    error: error instanceof Error ? error.message : String(error),
  };
}

/** 2 when any probe could not be evaluated (the gate is incomplete), else 1 on any regression, else 0. */
export function checkExitCode(checks: ProbeCheck[]): 0 | 1 | 2 {
  if (checks.some((c) => c.status === "error")) return 2;
  return checks.some((c) => c.status === "regression") ? 1 : 0;
}
