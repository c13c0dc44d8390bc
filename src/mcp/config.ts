/**
 * Finds, reads, validates and merges the MCP config layers into one `McpConfig`.
 * Layers follow pi-mcp-adapter: shared user files, then the agent's own file, then the project's,
 * so the file closest to the work wins field by field.
 */

import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { inputError } from "../errors.js";
import { JsoncSyntaxError, parseJsonc } from "./jsonc.js";
import type { McpConfig, McpServerEntry, McpSettings } from "./types.js";

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
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw inputError(
      file,
      undefined,
      `cannot read MCP config (${(error as NodeJS.ErrnoException).code ?? String(error)})`,
    );
  }
  let root: unknown;
  try {
    root = parseJsonc(text);
  } catch (error) {
    if (!(error instanceof JsoncSyntaxError)) throw error;
    throw inputError(file, undefined, `invalid JSON: ${error.message}`);
  }
  if (!isPlainObject(root))
    throw inputError(file, undefined, `expected a JSON object at the top level, got ${describe(root)}`);

  // `imports` (configs of other tools) is accepted so real-world files load, but never followed.
  const { mcpServers = {}, settings = {} } = root;
  if (!isPlainObject(mcpServers)) {
    throw inputError(
      file,
      "mcpServers",
      `expected an object mapping server names to entries, got ${describe(mcpServers)}`,
    );
  }
  if (!isPlainObject(settings)) throw inputError(file, "settings", `expected an object, got ${describe(settings)}`);

  for (const [name, entry] of Object.entries(mcpServers)) {
    if (!isPlainObject(entry))
      throw inputError(file, `mcpServers.${name}`, `expected an object, got ${describe(entry)}`);
    checkFields(file, `mcpServers.${name}`, entry, SERVER_FIELDS);
  }
  checkFields(file, "settings", settings, SETTINGS_FIELDS);
  return { mcpServers: mcpServers as ConfigLayer["mcpServers"], settings };
}

/** How one known field is checked; `fields` describes a nested object's own known fields. */
interface FieldCheck {
  accepts: (value: unknown) => boolean;
  expected: string;
  fields?: Record<string, FieldCheck>;
}

const isString = (value: unknown): value is string => typeof value === "string";
const isStringArray = (value: unknown): value is string[] => Array.isArray(value) && value.every(isString);

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const aString: FieldCheck = { accepts: isString, expected: "a string" };
const aBoolean: FieldCheck = { accepts: (v) => typeof v === "boolean", expected: "true or false" };
const aDuration: FieldCheck = {
  accepts: (v) => typeof v === "number" && Number.isFinite(v) && v >= 0,
  expected: "a number of zero or more",
};
const aStringArray: FieldCheck = { accepts: isStringArray, expected: "an array of strings" };
const aStringRecord: FieldCheck = {
  accepts: (v) => isPlainObject(v) && Object.values(v).every(isString),
  expected: "an object whose values are all strings",
};
const anything: FieldCheck = { accepts: () => true, expected: "any value" };

function oneOf(...allowed: string[]): FieldCheck {
  return {
    accepts: (v) => isString(v) && allowed.includes(v),
    expected: `one of ${allowed.map((a) => JSON.stringify(a)).join(", ")}`,
  };
}

const directToolsCheck: FieldCheck = {
  accepts: (v) => typeof v === "boolean" || v === "search" || isStringArray(v),
  expected: 'true, false, "search" or an array of tool names',
};
const toolPrefixCheck = oneOf("server", "short", "none", "mcp");

const SERVER_FIELDS: Record<string, FieldCheck> = {
  command: aString,
  args: aStringArray,
  env: aStringRecord,
  inheritEnv: aBoolean,
  cwd: aString,
  url: aString,
  headers: aStringRecord,
  socket: aString,
  auth: anything,
  bearerToken: aString,
  bearerTokenEnv: aString,
  requestHeadersCommand: {
    accepts: isPlainObject,
    expected: "an object",
    fields: { command: aString, args: aStringArray, env: aStringRecord, timeoutMs: aDuration },
  },
  protocolVersion: aString,
  lifecycle: oneOf("lazy", "eager", "keep-alive", "lazy-keep-alive"),
  idleTimeout: aDuration,
  requestTimeoutMs: aDuration,
  exposeResources: aBoolean,
  directTools: directToolsCheck,
  toolPrefix: toolPrefixCheck,
  includeTools: aStringArray,
  excludeTools: aStringArray,
  searchKeywords: aStringArray,
  approveTools: {
    accepts: (v) => typeof v === "boolean" || isStringArray(v),
    expected: "true, false or an array of tool names",
  },
  disabled: aBoolean,
  debug: aBoolean,
};

const SETTINGS_FIELDS: Record<string, FieldCheck> = {
  directTools: directToolsCheck,
  toolPrefix: toolPrefixCheck,
  disableProxyTool: aBoolean,
  idleTimeout: aDuration,
  scriptMode: aBoolean,
  requestTimeoutMs: aDuration,
  sampling: aBoolean,
};

/** Checks the known fields present in `value`; unknown fields are left alone and kept. */
function checkFields(
  file: string,
  path: string,
  value: Record<string, unknown>,
  checks: Record<string, FieldCheck>,
): void {
  for (const [key, check] of Object.entries(checks)) {
    if (!Object.hasOwn(value, key)) continue;
    const field = value[key];
    const fieldPath = `${path}.${key}`;
    if (!check.accepts(field)) throw inputError(file, fieldPath, `expected ${check.expected}, got ${describe(field)}`);
    if (check.fields) checkFields(file, fieldPath, field as Record<string, unknown>, check.fields);
  }
}

/** A short rendering of a wrong value for an error message. */
function describe(value: unknown): string {
  if (Array.isArray(value)) return "an array";
  if (value === null) return "null";
  if (typeof value === "object") return "an object";
  if (typeof value === "string") return JSON.stringify(value);
  return String(value);
}
