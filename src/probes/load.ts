import { existsSync, readFileSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { parse as parseYaml } from "yaml";
import type { MarkerSpec } from "../capture/types.js";
import { inputError, UserError } from "../errors.js";
import { WIRE_APIS } from "../providers/codecs.js";
import type { ScriptStep } from "../providers/scripted-model.js";
import type { WireApi } from "../providers/types.js";
import { isSafeName, SAFE_NAME_RULE } from "../safe-path.js";
import type {
  CacheSetup,
  Probe,
  ProbeAgent,
  ProbeExpect,
  Series,
  SkillsExpect,
  SystemDelta,
  TextExpect,
  WireExpect,
} from "./types.js";

type Obj = Record<string, unknown>;

/** Reads fields of one YAML mapping, naming the file and the dotted field in every complaint. */
class Fields {
  constructor(
    readonly file: string,
    readonly path: string,
    readonly obj: Obj,
  ) {}

  static of(file: string, path: string, value: unknown): Fields {
    if (value === null || typeof value !== "object" || Array.isArray(value))
      throw inputError(file, path || undefined, "expected a mapping");
    return new Fields(file, path, value as Obj);
  }

  at(key: string): string {
    return this.path ? `${this.path}.${key}` : key;
  }

  fail(key: string, expected: string): UserError {
    return inputError(this.file, this.at(key), expected);
  }

  allowOnly(keys: string[]): void {
    for (const key of Object.keys(this.obj)) {
      if (!keys.includes(key)) throw this.fail(key, `unknown field; expected one of ${keys.join(", ")}`);
    }
  }

  has(key: string): boolean {
    return this.obj[key] !== undefined && this.obj[key] !== null;
  }

  string(key: string): string {
    const value = this.obj[key];
    if (typeof value !== "string" || value === "") throw this.fail(key, "expected a non-empty string");
    return value;
  }

  optString(key: string): string | undefined {
    return this.has(key) ? this.string(key) : undefined;
  }

  bool(key: string, fallback: boolean): boolean {
    const value = this.obj[key];
    if (value === undefined || value === null) return fallback;
    if (typeof value !== "boolean") throw this.fail(key, "expected true or false");
    return value;
  }

  oneOf<T extends string>(key: string, options: readonly T[], fallback: T): T {
    if (!this.has(key)) return fallback;
    const value = this.obj[key];
    if (typeof value !== "string" || !options.includes(value as T))
      throw this.fail(key, `expected one of ${options.join(", ")}`);
    return value as T;
  }

  /** A list of names, also accepted as one comma-separated string (`read,mcp`) as on pi's command line. */
  names(key: string): string[] | undefined {
    if (!this.has(key)) return undefined;
    const value = this.obj[key];
    if (typeof value === "string")
      return value
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean);
    if (Array.isArray(value) && value.every((v) => typeof v === "string")) return value as string[];
    throw this.fail(key, "expected a list of names or a comma-separated string");
  }

  list(key: string): unknown[] {
    if (!this.has(key)) return [];
    const value = this.obj[key];
    if (!Array.isArray(value)) throw this.fail(key, "expected a list");
    return value;
  }

  child(key: string): Fields | undefined {
    return this.has(key) ? Fields.of(this.file, this.at(key), this.obj[key]) : undefined;
  }
}

/** `/regex/flags` in YAML is a regular expression; anything else is a literal string. */
export function parseMatcher(file: string, field: string, value: unknown): string | RegExp {
  if (typeof value !== "string" || value === "") throw inputError(file, field, "expected a string or /regex/");
  const regex = /^\/(.+)\/([a-z]*)$/s.exec(value);
  if (!regex) return value;
  try {
    return new RegExp(regex[1]!, regex[2]);
  } catch (error) {
    throw inputError(file, field, `expected a valid regular expression (${(error as Error).message})`);
  }
}

function loadAgent(file: string, f: Fields | undefined, root: string): ProbeAgent {
  const agent = f ?? Fields.of(file, "agent", {});
  agent.allowOnly([
    "kind",
    "tools",
    "noTools",
    "noBuiltinTools",
    "excludeTools",
    "skills",
    "noSkills",
    "skillMode",
    "skillLayers",
    "trusted",
    "mcp",
    "cwd",
    "profile",
  ]);
  const mcpFields = agent.child("mcp");
  let mcp: ProbeAgent["mcp"];
  if (mcpFields) {
    mcpFields.allowOnly(["config", "cache", "exclusive"]);
    const config = mcpFields.string("config");
    const configPath = isAbsolute(config) ? config : join(root, config);
    if (!existsSync(configPath))
      throw mcpFields.fail("config", `expected an existing MCP config file, but ${configPath} does not exist`);
    mcp = {
      config: configPath,
      cache: mcpFields.oneOf<CacheSetup>("cache", ["valid", "empty-file", "missing"], "valid"),
      exclusive: mcpFields.bool("exclusive", true),
    };
  }
  const skills = agent.list("skills").map((s, i) => {
    if (typeof s !== "string" || s === "") throw inputError(file, `agent.skills[${i}]`, "expected a path");
    return s;
  });
  return {
    kind: agentKind(agent),
    tools: agent.names("tools"),
    noTools: agent.bool("noTools", false),
    noBuiltinTools: agent.bool("noBuiltinTools", false),
    excludeTools: agent.names("excludeTools"),
    skills,
    noSkills: agent.bool("noSkills", false),
    skillMode: agent.oneOf("skillMode", ["index", "load_skill"] as const, "index"),
    skillLayers: skillLayers(agent.child("skillLayers"), root),
    trusted: agent.bool("trusted", false),
    mcp,
    cwd: agent.optString("cwd"),
    profile: agent.optString("profile"),
  };
}

/** load_skill catalog layers: each an existing folder, relative to the checkout. */
function skillLayers(f: Fields | undefined, root: string): ProbeAgent["skillLayers"] {
  if (!f) return undefined;
  f.allowOnly(["builtin", "user", "project"]);
  const layers: NonNullable<ProbeAgent["skillLayers"]> = {};
  for (const layer of ["builtin", "user", "project"] as const) {
    const dir = f.optString(layer);
    if (dir === undefined) continue;
    const path = isAbsolute(dir) ? dir : join(root, dir);
    if (!existsSync(path)) throw f.fail(layer, `expected an existing folder of skills, but ${path} does not exist`);
    layers[layer] = dir;
  }
  return layers;
}

/** Only our runtime runs probes so far; a probe asking for the real pi must not silently get it. */
function agentKind(agent: Fields): ProbeAgent["kind"] {
  const kind = agent.oneOf("kind", ["runtime", "pi"] as const, "runtime");
  if (kind === "pi")
    throw agent.fail("kind", 'expected "runtime": running the real pi against the mock provider is not built yet');
  return kind;
}

function loadScript(file: string, field: string, steps: unknown[]): ScriptStep[] {
  const call = (value: unknown, path: string) => {
    const f = Fields.of(file, path, value);
    f.allowOnly(["call", "args"]);
    const args = f.obj.args;
    if (
      args !== undefined &&
      typeof args !== "string" &&
      (args === null || typeof args !== "object" || Array.isArray(args))
    ) {
      throw f.fail("args", "expected a mapping or a raw JSON string");
    }
    return { call: f.string("call"), args: args as Record<string, unknown> | string | undefined };
  };
  return steps.map((step, i) => {
    const path = `${field}[${i}]`;
    const f = Fields.of(file, path, step);
    if (f.has("text")) {
      f.allowOnly(["text"]);
      return { text: String(f.obj.text) };
    }
    if (f.has("calls")) {
      f.allowOnly(["calls"]);
      return { calls: f.list("calls").map((c, j) => call(c, `${path}.calls[${j}]`)) };
    }
    if (f.has("call")) return call(step, path);
    throw inputError(file, path, "expected {text: ...}, {call: name, args: ...} or {calls: [...]}");
  });
}

function loadMarkers(file: string, f: Fields | undefined): Record<string, MarkerSpec> {
  const markers: Record<string, MarkerSpec> = {};
  for (const [name, value] of Object.entries(f?.obj ?? {})) {
    const m = Fields.of(file, `markers.${name}`, value);
    m.allowOnly(["in", "match"]);
    markers[name] = {
      in: m.oneOf("in", ["system", "tools", "messages"] as const, "messages"),
      match: parseMatcher(file, m.at("match"), m.obj.match),
    };
  }
  return markers;
}

function series(file: string, field: string, value: unknown): Series {
  if (Array.isArray(value)) return value;
  if (value && typeof value === "object" && "all" in (value as Obj) && Object.keys(value as Obj).length === 1)
    return value as { all: unknown };
  throw inputError(file, field, "expected a list with one value per request, or {all: value}");
}

function textExpect(file: string, path: string, value: unknown): TextExpect {
  const f = Fields.of(file, path, value);
  f.allowOnly(["equals", "contains", "startsWith", "endsWith", "matches"]);
  const out: TextExpect = {};
  for (const key of ["equals", "contains", "startsWith", "endsWith"] as const)
    if (f.has(key)) out[key] = String(f.obj[key]);
  if (f.has("matches")) {
    const m = parseMatcher(file, f.at("matches"), f.obj.matches);
    out.matches = typeof m === "string" ? new RegExp(m) : m;
  }
  return out;
}

function loadExpect(file: string, f: Fields | undefined): ProbeExpect {
  const expect = f ?? Fields.of(file, "expect", {});
  expect.allowOnly(["requests", "each", "constant", "systemDelta", "toolResults", "wire", "surface", "skills"]);
  const requests = expect.obj.requests;
  if (requests !== undefined && (typeof requests !== "number" || !Number.isInteger(requests) || requests < 0)) {
    throw expect.fail("requests", "expected a whole number of requests");
  }
  const each: Record<string, Series> = {};
  for (const [field, value] of Object.entries(expect.child("each")?.obj ?? {}))
    each[field] = series(file, `expect.each.${field}`, value);
  const constant = expect.names("constant") ?? [];
  const systemDelta: SystemDelta[] = expect.list("systemDelta").map((value, i) => {
    const d = Fields.of(file, `expect.systemDelta[${i}]`, value);
    d.allowOnly(["at", "added", "removed"]);
    const at = d.obj.at;
    if (typeof at !== "number" || at < 2) throw d.fail("at", "expected a request number of 2 or more");
    const lines = (key: string) => d.list(key).map((line, j) => parseMatcher(file, `${d.at(key)}[${j}]`, line));
    return { at, added: lines("added"), removed: lines("removed") };
  });
  const toolResults: Record<number, TextExpect> = {};
  for (const [key, value] of Object.entries(expect.child("toolResults")?.obj ?? {})) {
    const index = Number(key);
    if (!Number.isInteger(index) || index < 1)
      throw inputError(file, `expect.toolResults.${key}`, "expected a tool result number from 1");
    toolResults[index] = textExpect(file, `expect.toolResults.${key}`, value);
  }
  const wire: Record<string, WireExpect> = {};
  for (const [server, value] of Object.entries(expect.child("wire")?.obj ?? {})) {
    const w = Fields.of(file, `expect.wire.${server}`, value);
    w.allowOnly(["methods", "calls", "firstMessageBefore", "silent"]);
    const calls = w.list("calls").map((c, i) => {
      const cf = Fields.of(file, `${w.at("calls")}[${i}]`, c);
      cf.allowOnly(["name", "arguments"]);
      return { name: cf.string("name"), arguments: cf.obj.arguments };
    });
    const before = w.obj.firstMessageBefore;
    if (before !== undefined && (typeof before !== "number" || before < 1))
      throw w.fail("firstMessageBefore", "expected a request number");
    wire[server] = {
      methods: w.names("methods"),
      calls: w.has("calls") ? calls : undefined,
      firstMessageBefore: before as number | undefined,
      silent: w.bool("silent", false),
    };
  }
  const surfaceFields = expect.child("surface");
  surfaceFields?.allowOnly(["registered", "active"]);
  const surface = {
    registered: surfaceFields?.has("registered")
      ? series(file, "expect.surface.registered", surfaceFields.obj.registered)
      : undefined,
    active: surfaceFields?.has("active") ? series(file, "expect.surface.active", surfaceFields.obj.active) : undefined,
  };
  return {
    requests: requests as number | undefined,
    each,
    constant,
    systemDelta,
    toolResults,
    wire,
    surface,
    skills: skillsExpect(expect.child("skills")),
  };
}

function skillsExpect(f: Fields | undefined): SkillsExpect | undefined {
  if (!f) return undefined;
  f.allowOnly(["loaded", "diagnostics"]);
  const diagnostics = f.list("diagnostics").map((value, i) => {
    const d = Fields.of(f.file, `${f.at("diagnostics")}[${i}]`, value);
    d.allowOnly(["type", "message", "path", "winner", "loser"]);
    return {
      type: d.oneOf("type", ["warning", "error", "collision"] as const, "warning"),
      message: d.string("message"),
      path: d.string("path"),
      winner: d.optString("winner"),
      loser: d.optString("loser"),
    };
  });
  return { loaded: f.names("loaded"), diagnostics: f.has("diagnostics") ? diagnostics : undefined };
}

/** Parse and validate a probe file; every problem names the file and the field. */
export function loadProbeFile(file: string, root: string): Probe {
  let raw: unknown;
  try {
    raw = parseYaml(readFileSync(file, "utf8"));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") throw inputError(file, undefined, "probe file not found");
    throw inputError(file, undefined, `expected valid YAML (${(error as Error).message.split("\n")[0]})`);
  }
  const top = Fields.of(file, "", raw);
  top.allowOnly(["name", "title", "description", "agent", "model", "prompts", "markers", "expect"]);
  const model = top.child("model") ?? Fields.of(file, "model", {});
  model.allowOnly(["api", "id", "script", "sampling"]);
  const prompts = top.list("prompts").map((p, i) => {
    if (typeof p !== "string" || p === "") throw inputError(file, `prompts[${i}]`, "expected a non-empty string");
    return p;
  });
  if (prompts.length === 0) throw top.fail("prompts", "expected at least one user message");
  const script = loadScript(file, "model.script", model.list("script"));
  if (script.length === 0) throw model.fail("script", "expected at least one model turn");
  // The name becomes the run folder and the workspace folder, both replaced on each run.
  if (!isSafeName(top.string("name"))) throw top.fail("name", `expected ${SAFE_NAME_RULE}`);
  return {
    file,
    name: top.string("name"),
    title: top.optString("title") ?? "",
    description: top.optString("description") ?? "",
    agent: loadAgent(file, top.child("agent"), root),
    model: {
      api: model.oneOf<WireApi>("api", WIRE_APIS, "openai-completions"),
      id: model.optString("id") ?? "token-plan/qwen3.8-flash",
      script,
      sampling: loadScript(file, "model.sampling", model.list("sampling")),
    },
    prompts,
    markers: loadMarkers(file, top.child("markers")),
    expect: loadExpect(file, top.child("expect")),
  };
}

/** A probe given by name (`p1` → `probes/p1.yaml`) or by path. */
export function resolveProbePath(nameOrPath: string, root: string): string {
  if (nameOrPath.includes("\0")) throw new UserError(`probe ${JSON.stringify(nameOrPath)}: expected no NUL character`);
  if (nameOrPath.endsWith(".yaml") || nameOrPath.endsWith(".yml") || nameOrPath.includes("/"))
    return resolve(nameOrPath);
  if (!isSafeName(nameOrPath))
    throw new UserError(`probe "${nameOrPath}": expected a probe file path or ${SAFE_NAME_RULE}`);
  return join(root, "probes", `${nameOrPath}.yaml`);
}
