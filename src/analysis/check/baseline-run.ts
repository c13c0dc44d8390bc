/**
 * A baseline file read as a run, so `diff` (and `report`) can take it as one side: each baseline
 * request becomes a record with its tools, roles, markers, tokens and sizes. A baseline written by
 * `check --run` also keeps each request's hashes and prefix, so a diff against it tells equal
 * requests from changed ones and `--cost` sees its cache; a probe's baseline has neither, so every
 * request reads as changed and nothing as cached. A baseline has no wire bodies.
 */
import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
import type { RequestRecord } from "../../capture/types.js";
import { type RunLookup, type RunSource, resolveRun } from "../load-run.js";
import { type BaselineRequest, readBaseline } from "./check.js";

/** A run as `diff` names one: a baseline `.json` file (`check --update` wrote it), or anything resolveRun takes. */
export function runOrBaseline(spec: string, lookup: RunLookup): RunSource {
  if (spec.endsWith(".json") && existsSync(spec) && statSync(spec).isFile()) return baselineRunSource(resolve(spec));
  return resolveRun(spec, lookup);
}

function baselineRunSource(path: string): RunSource {
  const baseline = readBaseline(path, "(baseline file)");
  const record = (r: BaselineRequest): RequestRecord => ({
    v: 1,
    run: path,
    probe: baseline.probe,
    seq: r.seq,
    kind: r.kind,
    ts: new Date(0).toISOString(),
    durationMs: 0,
    api: "",
    model: baseline.model ?? "",
    tools: r.tools,
    toolsBytes: r.bytes.tools,
    toolsChars: r.bytes.tools,
    systemBytes: r.bytes.system,
    systemChars: r.bytes.system,
    systemParts: [],
    messagesBytes: r.bytes.messages,
    bodyBytes: r.bytes.body,
    roles: r.roles,
    markers: r.markers,
    tokens: r.tokens ? { encoding: "o200k_base", ...r.tokens } : null,
    usage: null,
    prefix: r.prefix ?? null,
    // No hashes kept: a value no real sha256 takes, so the request reads as changed, never as equal.
    hashes: r.hashes ?? { tools: `baseline ${r.seq}`, system: `baseline ${r.seq}`, body: `baseline ${r.seq}` },
    response: null,
  });
  return {
    label: path,
    recordsFile: null,
    hasPayloads: false,
    count: () => baseline.requests.length,
    records: () => baseline.requests.map(record),
    summaries: () => baseline.requests.map(record),
    payloads: () => [],
    lazyPayloads: () => [],
    payload: () => null,
    events: () => [],
  };
}
