/**
 * Codex's config as Codex 0.169 reads it, as far as record needs it: `$CODEX_HOME/config.toml`, the
 * profile a `--profile NAME` (`-p`) lays over it (`$CODEX_HOME/NAME.config.toml`), and the
 * `-c key=value` (`--config`) overrides on its command line, which win over both (`codex --help`).
 * From these, which model provider Codex will use.
 */
import { join } from "node:path";
import { parse, TomlError } from "smol-toml";
import { inputError } from "../errors.js";
import { readUserConfig, type Table, userConfigDir } from "./pointer-files.js";

/**
 * Codex's built-in providers for Amazon Bedrock (codex-rs model-provider/src/amazon_bedrock):
 * `amazon-bedrock` reaches Mantle (`https://bedrock-mantle.<region>.api.aws/openai/v1`),
 * `amazon-bedrock-runtime` the runtime (`https://bedrock-runtime.<region>.amazonaws.com/openai/v1`).
 * Both speak the OpenAI Responses API over HTTP POSTs and sign each request with AWS SigV4 for that
 * host (or send a Bedrock API key, AWS_BEARER_TOKEN_BEDROCK, as a bearer token); neither takes a
 * base URL of the user's.
 */
const CODEX_BEDROCK_PROVIDERS: readonly string[] = ["amazon-bedrock", "amazon-bedrock-runtime"];

export function parseCodexConfig(text: string, file: string): Table {
  try {
    return parse(text) as Table;
  } catch (error) {
    // Only the position: the file may hold secrets (bearer tokens, headers), never echoed.
    const where = error instanceof TomlError ? ` (line ${error.line}, column ${error.column})` : "";
    throw inputError(file, undefined, `expected TOML as Codex reads it${where}`);
  }
}

/** A Codex config file as a table, or an empty one when there is none. */
function codexConfigFile(file: string): { file: string; text: string | undefined; table: Table } {
  const text = readUserConfig(file, "Codex config");
  return { file, text, table: text === undefined ? {} : parseCodexConfig(text, file) };
}

/** The user's config.toml as a table, or an empty one. */
export const userCodexConfig = (userHome: string) => codexConfigFile(join(userHome, "config.toml"));

/** The value of a `--name VALUE`, `--name=VALUE` or `-x VALUE` option among Codex's arguments, the last one given. */
function optionValues(args: readonly string[], long: string, short: string): string[] {
  const values: string[] = [];
  for (const [i, arg] of args.entries()) {
    if ((arg === long || arg === short) && i + 1 < args.length) values.push(args[i + 1]!);
    else if (arg.startsWith(`${long}=`)) values.push(arg.slice(long.length + 1));
  }
  return values;
}

/** `model_provider=VALUE` of a `-c`: its value read as TOML, else the raw text, as Codex reads it. */
function overriddenProvider(override: string): string | undefined {
  const at = override.indexOf("=");
  if (at < 0 || override.slice(0, at).trim() !== "model_provider") return undefined;
  const value = override.slice(at + 1).trim();
  try {
    const read = parse(`v = ${value}`).v;
    return typeof read === "string" ? read : value;
  } catch {
    return value;
  }
}

/**
 * The model provider Codex run with `args` will use, by what it reads: the last `-c
 * model_provider=…`, else the `--profile` file's `model_provider`, else config.toml's; "openai" when
 * none says. A file that cannot be read is the pointer's to report: it counts as saying nothing.
 */
function codexModelProvider(env: NodeJS.ProcessEnv, args: readonly string[]): string {
  const overrides = optionValues(args, "--config", "-c")
    .map(overriddenProvider)
    .filter((p) => p !== undefined);
  if (overrides.length > 0) return overrides.at(-1)!;
  const userHome = userConfigDir(env, "CODEX_HOME", ".codex");
  const profile = optionValues(args, "--profile", "-p").at(-1);
  const files = [join(userHome, "config.toml")];
  // A profile's name becomes a file name: one plain segment only.
  if (profile !== undefined && /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/.test(profile))
    files.unshift(join(userHome, `${profile}.config.toml`));
  for (const file of files) {
    try {
      const provider = codexConfigFile(file).table.model_provider;
      if (typeof provider === "string") return provider;
    } catch {
      // Not readable: the pointer says so when it reads the file; here it names no provider.
    }
  }
  return "openai";
}

/** The Bedrock provider Codex run with `args` will use, or undefined when it uses another. */
export function codexBedrockProvider(env: NodeJS.ProcessEnv, args: readonly string[]): string | undefined {
  const provider = codexModelProvider(env, args);
  return CODEX_BEDROCK_PROVIDERS.includes(provider) ? provider : undefined;
}
