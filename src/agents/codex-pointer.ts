/**
 * Codex 0.169 ignores OPENAI_BASE_URL, and its built-in `openai` provider (which config cannot
 * redefine) goes to the real host. A provider of our own in config.toml, selected by
 * `model_provider`, is reached at its `base_url`: over a WebSocket (`<base_url>/responses`, Codex's
 * default transport, whose turns the proxy decodes: capture/responses-socket.ts) when it says
 * `supports_websockets`, else with HTTP POSTs (`record --codex-http`). Codex reads config.toml from $CODEX_HOME only, so the pointer makes a stand-in
 * CODEX_HOME: the user's config.toml with our provider added and selected (every other setting kept:
 * model, MCP servers, approvals …), and links to the user's instruction files and skills. The user's
 * own files are never written. Codex's state (sessions, history, logs, its SQLite files) stays in the
 * stand-in and goes with it: linking it would let SQLite put a live WAL file beside a link that is
 * then removed. auth.json is not linked: the provider sends OPENAI_API_KEY as Codex's custom
 * providers do, since a ChatGPT sign-in's tokens are for ChatGPT's backend, not the OpenAI API.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse, stringify, TomlError } from "smol-toml";
import { inputError } from "../errors.js";
import { isTable, linkedStandIn, readUserConfig, type Table, userConfigDir } from "./pointer-files.js";
import type { AgentPointer, PointerContext } from "./pointer-types.js";

/** The provider's id in config.toml; Codex's built-in ids (openai, oss …) cannot be redefined. */
export const CODEX_PROVIDER_ID = "payload-probe";

/** What of the user's CODEX_HOME shapes the prompt and is only read: the global instructions, prompts, rules, skills. */
const LINKED = new Set(["AGENTS.md", "AGENTS.override.md", "prompts", "rules", "skills"]);

function parseUserConfig(text: string, file: string): Table {
  try {
    return parse(text) as Table;
  } catch (error) {
    // Only the position: the file may hold secrets (bearer tokens, headers), never echoed.
    const where = error instanceof TomlError ? ` (line ${error.line}, column ${error.column})` : "";
    throw inputError(file, undefined, `expected TOML as Codex reads it${where}`);
  }
}

/**
 * The config.toml Codex gets: the user's (when there is one) with our provider added and selected.
 * A profile's `model_provider` would win over the top-level key, so profiles lose theirs.
 */
export function codexConfig(userText: string | undefined, file: string, openaiBase: string, websockets = true): string {
  const config = userText === undefined ? {} : parseUserConfig(userText, file);
  config.model_provider = CODEX_PROVIDER_ID;
  if (isTable(config.profiles))
    for (const profile of Object.values(config.profiles)) if (isTable(profile)) delete profile.model_provider;
  const providers = isTable(config.model_providers) ? config.model_providers : {};
  providers[CODEX_PROVIDER_ID] = {
    name: "OpenAI through payload-probe",
    base_url: openaiBase,
    wire_api: "responses",
    env_key: "OPENAI_API_KEY",
    env_key_instructions:
      "payload-probe records Codex on the OpenAI API with the key in OPENAI_API_KEY (a ChatGPT sign-in is not used)",
    supports_websockets: websockets,
  };
  config.model_providers = providers;
  return `${stringify(config)}\n`;
}

export const codexPointer: AgentPointer = {
  agent: "Codex",
  api: "OpenAI Responses",
  programs: ["codex"],
  point({ bases, tempDir, env, codexHttp }: PointerContext) {
    const userHome = userConfigDir(env, "CODEX_HOME", ".codex");
    const file = join(userHome, "config.toml");
    const config = codexConfig(readUserConfig(file, "Codex config"), file, bases.openai, codexHttp !== true);
    const home = linkedStandIn(userHome, join(tempDir, "codex-home"), (name) => LINKED.has(name));
    // The user's config may hold tokens or headers of theirs: readable by the user alone, gone with the folder.
    writeFileSync(join(home, "config.toml"), config, { mode: 0o600 });
    return { CODEX_HOME: home };
  },
};
