import type { RequestRecord } from "../capture/types.js";
import type { ProbeExpect, Series, SkillDiagnosticExpect, TextExpect } from "./types.js";

/** What a run left behind that expectations are checked against. */
export interface RunObservation {
  records: RequestRecord[];
  /** System prompt text of each request, by position in `records`. */
  systemTexts: string[];
  /** Tool results in the order they were produced. */
  toolResults: string[];
  /** Registry and active set just before each request, by position in `records`. */
  surfaces: { registered: string[]; active: string[] }[];
  /** Wire log lines per server, with the number of wire-log lines written before each request. */
  wire: { server: string; method?: string; params?: unknown }[];
  wireLinesBefore: number[];
  /** What skill discovery loaded and reported, paths relative to the probe's workspace. */
  skills?: { loaded: string[]; diagnostics: SkillDiagnosticExpect[] };
}

const show = (value: unknown) => JSON.stringify(value);

function valueAt(record: RequestRecord, field: string): unknown {
  if (field === "roles") return record.roles.join(">");
  let value: unknown = record;
  for (const key of field.split("."))
    value = value && typeof value === "object" ? (value as Record<string, unknown>)[key] : undefined;
  return value;
}

function equal(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function expectedAt(series: Series, i: number): { has: boolean; value: unknown } {
  if (Array.isArray(series)) return { has: i < series.length, value: series[i] };
  return { has: true, value: series.all };
}

function checkSeriesLength(series: Series, count: number, label: string, failures: string[]): void {
  if (Array.isArray(series) && series.length !== count) {
    failures.push(`${label}: expected values for ${series.length} requests, the run made ${count}`);
  }
}

function lineMatches(line: string, pattern: string | RegExp): boolean {
  return typeof pattern === "string" ? line === pattern : pattern.test(line);
}

function textFailure(actual: string, expect: TextExpect): string | undefined {
  if (expect.equals !== undefined && actual !== expect.equals) return `expected exactly ${show(expect.equals)}`;
  if (expect.contains !== undefined && !actual.includes(expect.contains))
    return `expected it to contain ${show(expect.contains)}`;
  if (expect.startsWith !== undefined && !actual.startsWith(expect.startsWith))
    return `expected it to start with ${show(expect.startsWith)}`;
  if (expect.endsWith !== undefined && !actual.endsWith(expect.endsWith))
    return `expected it to end with ${show(expect.endsWith)}`;
  if (expect.matches !== undefined && !expect.matches.test(actual)) return `expected it to match ${expect.matches}`;
  return undefined;
}

/** Lines present in `after` but not in `before`, and the reverse, as multisets. */
export function lineDelta(before: string, after: string): { added: string[]; removed: string[] } {
  const count = (lines: string[]) => lines.reduce((m, l) => m.set(l, (m.get(l) ?? 0) + 1), new Map<string, number>());
  const a = count(before.split("\n"));
  const b = count(after.split("\n"));
  const diff = (x: Map<string, number>, y: Map<string, number>) =>
    [...x.entries()].flatMap(([line, n]) => Array<string>(Math.max(0, n - (y.get(line) ?? 0))).fill(line));
  return { added: diff(b, a), removed: diff(a, b) };
}

/** Every way the run differs from the probe's expect block, each naming the request and the field. */
export function checkExpectations(expect: ProbeExpect, run: RunObservation): string[] {
  const failures: string[] = [];
  for (const check of [
    checkRequestCount,
    checkEach,
    checkConstant,
    checkSystemDeltas,
    checkToolResults,
    checkWire,
    checkSurface,
    checkSkills,
  ])
    check(expect, run, failures);
  return failures;
}

function checkRequestCount(expect: ProbeExpect, run: RunObservation, failures: string[]): void {
  if (expect.requests !== undefined && run.records.length !== expect.requests) {
    failures.push(`requests: expected ${expect.requests} provider requests, got ${run.records.length}`);
  }
}

/** `each`: a value per request (or one for all) of a record field. */
function checkEach(expect: ProbeExpect, run: RunObservation, failures: string[]): void {
  const { records } = run;
  for (const [field, series] of Object.entries(expect.each)) {
    checkSeriesLength(series, records.length, `each.${field}`, failures);
    records.forEach((record, i) => {
      const expected = expectedAt(series, i);
      const actual = valueAt(record, field);
      if (expected.has && !equal(actual, expected.value)) {
        failures.push(`request ${record.seq}: ${field} expected ${show(expected.value)}, got ${show(actual)}`);
      }
    });
  }
}

/** `constant`: fields that keep request 1's value in every request. */
function checkConstant(expect: ProbeExpect, run: RunObservation, failures: string[]): void {
  const { records } = run;
  for (const field of expect.constant) {
    const first = records[0] ? valueAt(records[0], field) : undefined;
    for (const record of records.slice(1)) {
      const actual = valueAt(record, field);
      if (!equal(actual, first))
        failures.push(
          `request ${record.seq}: ${field} expected to stay ${show(first)} as in request 1, got ${show(actual)}`,
        );
    }
  }
}

/** `systemDelta`: the system lines a request adds and removes against the one before it. */
function checkSystemDeltas(expect: ProbeExpect, run: RunObservation, failures: string[]): void {
  for (const delta of expect.systemDelta) {
    const i = run.records.findIndex((r) => r.seq === delta.at);
    if (i < 1) {
      failures.push(`systemDelta: request ${delta.at} does not exist or has no previous request`);
      continue;
    }
    const { added, removed } = lineDelta(run.systemTexts[i - 1]!, run.systemTexts[i]!);
    const compare = (label: string, actual: string[], wanted: (string | RegExp)[] = []) => {
      const ok = actual.length === wanted.length && wanted.every((pattern, j) => lineMatches(actual[j]!, pattern));
      if (!ok)
        failures.push(
          `request ${delta.at}: system lines ${label} expected ${show(wanted.map(String))}, got ${show(actual)}`,
        );
    };
    compare("added", added, delta.added);
    compare("removed", removed, delta.removed);
  }
}

/** `toolResults`: the text of the n-th tool result. */
function checkToolResults(expect: ProbeExpect, run: RunObservation, failures: string[]): void {
  for (const [key, textExpect] of Object.entries(expect.toolResults)) {
    const index = Number(key);
    const actual = run.toolResults[index - 1];
    if (actual === undefined) {
      failures.push(`tool result ${index}: the run produced only ${run.toolResults.length} tool results`);
      continue;
    }
    const problem = textFailure(actual, textExpect);
    if (problem) failures.push(`tool result ${index}: ${problem}, got ${show(actual)}`);
  }
}

/** `wire`: what each stub server received, in order, and when its first message came. */
function checkWire(expect: ProbeExpect, run: RunObservation, failures: string[]): void {
  for (const [server, wireExpect] of Object.entries(expect.wire)) {
    const lines = run.wire.map((line, index) => ({ ...line, index })).filter((line) => line.server === server);
    const methods = lines.map((l) => l.method).filter((m): m is string => m !== undefined);
    if (wireExpect.silent && lines.length > 0)
      failures.push(`wire ${server}: expected no messages, got ${show(methods)}`);
    if (wireExpect.methods && !equal(methods, wireExpect.methods)) {
      failures.push(`wire ${server}: methods expected ${show(wireExpect.methods)}, got ${show(methods)}`);
    }
    if (wireExpect.calls) {
      const calls = lines
        .filter((l) => l.method === "tools/call")
        .map((l) => l.params as { name?: string; arguments?: unknown });
      const want = wireExpect.calls;
      const same =
        calls.length === want.length &&
        want.every(
          (w, j) => calls[j]!.name === w.name && (w.arguments === undefined || equal(calls[j]!.arguments, w.arguments)),
        );
      if (!same)
        failures.push(
          `wire ${server}: tools/call expected ${show(want)}, got ${show(calls.map((c) => ({ name: c.name, arguments: c.arguments })))}`,
        );
    }
    if (wireExpect.firstMessageBefore !== undefined) {
      const n = wireExpect.firstMessageBefore;
      const first = lines[0]?.index;
      const linesBeforeN = run.wireLinesBefore[n - 1];
      const linesBeforePrev = run.wireLinesBefore[n - 2] ?? 0;
      if (first === undefined)
        failures.push(`wire ${server}: expected its first message before request ${n}, it received none`);
      else if (linesBeforeN === undefined) failures.push(`wire ${server}: request ${n} was never made`);
      else if (!(first >= linesBeforePrev && first < linesBeforeN)) {
        failures.push(
          `wire ${server}: expected its first message between request ${n - 1} and request ${n}, it came at wire line ${first + 1}`,
        );
      }
    }
  }
}

/** `surface`: the registered and active tools just before each request. */
function checkSurface(expect: ProbeExpect, run: RunObservation, failures: string[]): void {
  const { records } = run;
  for (const key of ["registered", "active"] as const) {
    const series = expect.surface[key];
    if (!series) continue;
    checkSeriesLength(series, run.surfaces.length, `surface.${key}`, failures);
    run.surfaces.forEach((surface, i) => {
      const expected = expectedAt(series, i);
      if (expected.has && !equal(surface[key], expected.value)) {
        failures.push(
          `request ${records[i]?.seq ?? i + 1}: ${key} tools expected ${show(expected.value)}, got ${show(surface[key])}`,
        );
      }
    });
  }
}

function checkSkills(expect: ProbeExpect, run: RunObservation, failures: string[]): void {
  if (!expect.skills) return;
  const actual = run.skills ?? { loaded: [], diagnostics: [] };
  if (expect.skills.loaded && !equal(actual.loaded, expect.skills.loaded)) {
    failures.push(`skills: loaded expected ${show(expect.skills.loaded)}, got ${show(actual.loaded)}`);
  }
  // Absent keys are dropped on both sides, so `winner`/`loser` are compared only for collisions.
  const normalize = (list: SkillDiagnosticExpect[]) =>
    list.map(
      ({ type, message, path, winner, loser }) =>
        JSON.parse(JSON.stringify({ type, message, path, winner, loser })) as unknown,
    );
  if (expect.skills.diagnostics && !equal(normalize(actual.diagnostics), normalize(expect.skills.diagnostics))) {
    failures.push(`skills: diagnostics expected ${show(expect.skills.diagnostics)}, got ${show(actual.diagnostics)}`);
  }
}
