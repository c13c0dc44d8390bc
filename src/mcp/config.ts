/**
 * Finds, reads, validates and merges the MCP config layers into one `McpConfig`.
 * Layers follow pi-mcp-adapter: shared user files, then the agent's own file, then the project's,
 * so the file closest to the work wins field by field.
 */

import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { z } from "zod";
import { inputError } from "../errors.js";
import { readInputFile } from "../files/input-file.js";
import { nearest } from "../text/nearest.js";
import { parseInput } from "../validate.js";
import { JsoncSyntaxError, parseJsonc } from "./jsonc.js";
import type { DirectToolsSetting, McpConfig, McpServerEntry, McpSettings } from "./types.js";

export interface LoadMcpConfigOptions {
  /** The project directory; `./.mcp.json` and `./.pi/mcp.json` are read from here. */
  cwd: string;
  agentDir: string;
  home: string;
  /** `--mcp-config`: replaces `<agentDir>/mcp.json`; must exist. Relative paths resolve against `cwd`. */
  configPath?: string;
  /** `PI_MCP_CONFIG_MODE=exclusive`: read only the agent's file (or `configPath`). */
  exclusive?: boolean;
  /** Source of `${VAR}` values; defaults to `process.env`. */
  env?: NodeJS.ProcessEnv;
}

/** The config files in merge order, lowest precedence first, whether or not they exist. */
export function mcpConfigLayers(opts: LoadMcpConfigOptions): string[] {
  const agentLayer = opts.configPath ? resolve(opts.cwd, opts.configPath) : join(opts.agentDir, "mcp.json");
  if (opts.exclusive) return [agentLayer];
  return [
    join(opts.home, ".config", "mcp", "mcp.json"),
    join(opts.home, ".agents", "mcp.json"),
    join(opts.home, ".agents", "mcp", "mcp.json"),
    agentLayer,
    join(opts.cwd, ".mcp.json"),
    join(opts.cwd, ".pi", "mcp.json"),
  ];
}

export function loadMcpConfig(opts: LoadMcpConfigOptions): McpConfig {
  if (opts.configPath) {
    const explicit = resolve(opts.cwd, opts.configPath);
    if (!existsSync(explicit)) throw inputError(explicit, undefined, "MCP config file not found");
  }
  const env = opts.env ?? process.env;
  // A Map keeps each server where it first appeared even when a later layer overrides it.
  const servers = new Map<string, { entry: Record<string, unknown>; lastFile: string }>();
  let settings: Record<string, unknown> = {};
  const sources: string[] = [];

  for (const file of mcpConfigLayers(opts)) {
    if (!existsSync(file)) continue;
    const layer = readLayer(file);
    sources.push(file);
    for (const [name, entry] of Object.entries(layer.mcpServers)) {
      servers.set(name, { entry: { ...servers.get(name)?.entry, ...entry }, lastFile: file });
    }
    settings = { ...settings, ...layer.settings };
  }

  return {
    servers: [...servers].map(([name, { entry, lastFile }]) => {
      if (entry.command === undefined && entry.url === undefined && entry.socket === undefined) {
        throw inputError(lastFile, `mcpServers.${name}`, "expected a server with a command, a url or a socket");
      }
      return { name, entry: interpolateServerEntry(entry as McpServerEntry, env) };
    }),
    settings: settings as McpSettings,
    sources,
  };
}

/** Replaces `${VAR}` with the variable's value; an unset variable becomes the empty string. */
export function interpolateEnvVars(value: string, env: NodeJS.ProcessEnv): string {
  return value.replace(/\$\{(\w+)\}/g, (_, name: string) => env[name] ?? "");
}

export function interpolateEnvRecord(
  record: Record<string, string> | undefined,
  env: NodeJS.ProcessEnv,
): Record<string, string> | undefined {
  if (record === undefined) return undefined;
  return Object.fromEntries(Object.entries(record).map(([key, value]) => [key, interpolateEnvVars(value, env)]));
}

function interpolateServerEntry(entry: McpServerEntry, env: NodeJS.ProcessEnv): McpServerEntry {
  const result = { ...entry };
  if (entry.env !== undefined) result.env = interpolateEnvRecord(entry.env, env);
  if (entry.headers !== undefined) result.headers = interpolateEnvRecord(entry.headers, env);
  if (entry.url !== undefined) result.url = interpolateEnvVars(entry.url, env);
  return result;
}

interface ConfigLayer {
  mcpServers: Record<string, Record<string, unknown>>;
  settings: Record<string, unknown>;
}

function readLayer(file: string): ConfigLayer {
  const text = readInputFile(file, "MCP config").toString("utf8");
  let root: unknown;
  try {
    root = parseJsonc(text);
  } catch (error) {
    if (!(error instanceof JsoncSyntaxError)) throw error;
    throw inputError(file, undefined, `invalid JSON: ${error.message}`);
  }
  return parseInput(layerSchema, root, file);
}

/** `expected …, got …`: a config names the wrong value's kind, since the user may not see it in a merged layer. */
const got =
  (expected: string) =>
  (issue: { input?: unknown }): string =>
    `expected ${expected}, got ${describe(issue.input)}`;

const isString = (value: unknown): value is string => typeof value === "string";
const isStringArray = (value: unknown): value is string[] => Array.isArray(value) && value.every(isString);

const aString = z.string({ error: got("a string") });
const aBoolean = z.boolean({ error: got("true or false") });
const aDuration = z
  .number({ error: got("a number of zero or more") })
  .min(0, { error: got("a number of zero or more") });
// The checks written as functions say in `meta` what they take, for the JSON Schema (scripts/gen-probe-schema.mjs).
const STRING_ARRAY = { type: "array", items: { type: "string" } };
const aStringArray = z.custom<string[]>(isStringArray, { error: got("an array of strings") }).meta(STRING_ARRAY);
const aStringRecord = z
  .custom<Record<string, string>>(
    (v) => typeof v === "object" && v !== null && !Array.isArray(v) && Object.values(v).every(isString),
    { error: got("an object whose values are all strings") },
  )
  .meta({ type: "object", additionalProperties: { type: "string" } });

function oneOf<const T extends readonly [string, ...string[]]>(allowed: T) {
  return z.enum(allowed, { error: got(`one of ${allowed.map((a) => JSON.stringify(a)).join(", ")}`) });
}

const directTools = z
  .custom<DirectToolsSetting>((v) => typeof v === "boolean" || v === "search" || isStringArray(v), {
    error: got('true, false, "search" or an array of tool names'),
  })
  .meta({ anyOf: [{ type: "boolean" }, { const: "search" }, STRING_ARRAY] });
const toolPrefix = oneOf(["server", "short", "none", "mcp"]);
/**
 * Known fields are checked; unknown ones are kept, so configs written for newer adapters still load —
 * except a key one or two edits from a known one (`"comand"`), a typo that would otherwise silently
 * drop the setting: it is named, with the key it is near.
 */
const anObject = <T extends z.core.$ZodLooseShape>(shape: T) =>
  z.looseObject(shape, { error: got("an object") }).superRefine((value, ctx) => {
    const known = Object.keys(shape);
    for (const key of Object.keys(value)) {
      const near = known.includes(key) ? undefined : nearest(key, known);
      if (near) ctx.addIssue({ code: "custom", path: [key], message: `unknown key; did you mean "${near}"?` });
    }
  });

const serverEntry = anObject({
  command: aString.optional(),
  args: aStringArray.optional(),
  env: aStringRecord.optional(),
  inheritEnv: aBoolean.optional(),
  cwd: aString.optional(),
  url: aString.optional(),
  headers: aStringRecord.optional(),
  socket: aString.optional(),
  auth: z.unknown().optional(),
  bearerToken: aString.optional(),
  bearerTokenEnv: aString.optional(),
  requestHeadersCommand: anObject({
    command: aString.optional(),
    args: aStringArray.optional(),
    env: aStringRecord.optional(),
    timeoutMs: aDuration.optional(),
  }).optional(),
  protocolVersion: aString.optional(),
  lifecycle: oneOf(["lazy", "eager", "keep-alive", "lazy-keep-alive"]).optional(),
  idleTimeout: aDuration.optional(),
  requestTimeoutMs: aDuration.optional(),
  exposeResources: aBoolean.optional(),
  directTools: directTools.optional(),
  toolPrefix: toolPrefix.optional(),
  includeTools: aStringArray.optional(),
  excludeTools: aStringArray.optional(),
  searchKeywords: aStringArray.optional(),
  approveTools: z
    .custom<boolean | string[]>((v) => typeof v === "boolean" || isStringArray(v), {
      error: got("true, false or an array of tool names"),
    })
    .meta({ anyOf: [{ type: "boolean" }, STRING_ARRAY] })
    .optional(),
  disabled: aBoolean.optional(),
  debug: aBoolean.optional(),
});

const settings = anObject({
  directTools: directTools.optional(),
  toolPrefix: toolPrefix.optional(),
  disableProxyTool: aBoolean.optional(),
  idleTimeout: aDuration.optional(),
  scriptMode: aBoolean.optional(),
  requestTimeoutMs: aDuration.optional(),
  sampling: aBoolean.optional(),
});

// `imports` (configs of other tools) is accepted so real-world files load, but never followed.
export const layerSchema = z.looseObject(
  {
    mcpServers: z
      .record(z.string(), serverEntry, { error: got("an object mapping server names to entries") })
      .default({}),
    settings: settings.default({}),
  },
  { error: (issue) => `expected a JSON object at the top level, got ${describe(issue.input)}` },
);

/** A short rendering of a wrong value for an error message. */
function describe(value: unknown): string {
  if (Array.isArray(value)) return "an array";
  if (value === null) return "null";
  if (typeof value === "object") return "an object";
  if (typeof value === "string") return JSON.stringify(value);
  return String(value);
}
