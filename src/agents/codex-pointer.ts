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
 *
 * Codex on Amazon Bedrock (a built-in `amazon-bedrock` or `amazon-bedrock-runtime` provider
 * selected: codex-config.ts) is not pointed: its requests are signed for Bedrock's host, so only the
 * forward proxy records them (`record -- codex` turns it on by itself: cli/record.ts).
 *
 * A user signed in with ChatGPT (auth.json holds the sign-in's tokens) keeps Codex's own provider:
 * the stand-in's config.toml sets only `chatgpt_base_url` and the provider's `openai_base_url` (unless
 * the user set one), both at the proxy's HTTPS listener (Codex refuses a backend that is not HTTPS),
 * auth.json is linked (read by Codex through the link and, when it refreshes the tokens, written in
 * place through it: never copied), and CODEX_CA_CERTIFICATE names a bundle of the session's authority
 * and the roots Codex would trust without it.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { rootCertificates } from "node:tls";
import { stringify } from "smol-toml";
import { codexBedrockProvider, parseCodexConfig, userCodexConfig } from "./codex-config.js";
import { isTable, linkedStandIn, userConfigDir } from "./pointer-files.js";
import type { AgentPointer, PointerContext } from "./pointer-types.js";

/** The provider's id in config.toml; Codex's built-in ids (openai, oss …) cannot be redefined. */
export const CODEX_PROVIDER_ID = "payload-probe";

/** What of the user's CODEX_HOME shapes the prompt and is only read: the global instructions, prompts, rules, skills. */
const LINKED = new Set(["AGENTS.md", "AGENTS.override.md", "prompts", "rules", "skills"]);

/**
 * The config.toml Codex gets: the user's (when there is one) with our provider added and selected.
 * A profile's `model_provider` would win over the top-level key, so profiles lose theirs.
 */
function codexConfig(userText: string | undefined, file: string, openaiBase: string, websockets = true): string {
  const config = userText === undefined ? {} : parseCodexConfig(userText, file);
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

/**
 * Whether Codex would use a ChatGPT sign-in: auth.json holds its tokens, not an API key, and the
 * config keeps Codex's own `openai` provider and the file store (a sign-in kept in the system's
 * keyring is filed under CODEX_HOME's path, which a stand-in changes). Only the file's fields are
 * looked at; a file that is not JSON is Codex's to report.
 */
export function codexChatgptSignIn(env: NodeJS.ProcessEnv): boolean {
  const userHome = userConfigDir(env, "CODEX_HOME", ".codex");
  let table: Record<string, unknown>;
  try {
    ({ table } = userCodexConfig(userHome));
  } catch {
    // A config Codex cannot read is the pointer's to report (an error for codex, a warning otherwise).
    return false;
  }
  if ((table.model_provider ?? "openai") !== "openai") return false;
  if ((table.cli_auth_credentials_store ?? "file") !== "file") return false;
  let auth: unknown;
  try {
    auth = JSON.parse(readFileSync(join(userHome, "auth.json"), "utf8"));
  } catch {
    return false;
  }
  if (!isTable(auth) || auth.auth_mode === "apikey" || !isTable(auth.tokens)) return false;
  return typeof auth.tokens.access_token === "string";
}

/**
 * The certificates Codex trusts for the session: the proxy's authority first, then what it trusted
 * before (the file its CODEX_CA_CERTIFICATE or SSL_CERT_FILE named, else Node's copy of the common
 * public roots, as Codex replaces its roots with the file's), so its other HTTPS calls (the sign-in's
 * refresh, MCP servers) still verify.
 */
function trustBundle(authority: string, env: NodeJS.ProcessEnv): string {
  const named = env.CODEX_CA_CERTIFICATE || env.SSL_CERT_FILE;
  let before: string;
  try {
    before = named ? readFileSync(named, "utf8") : rootCertificates.join("\n");
  } catch {
    before = rootCertificates.join("\n");
  }
  return `${authority.trim()}\n${before}\n`;
}

/** The stand-in for a ChatGPT sign-in: Codex's own provider, its backend at the proxy's HTTPS listener. */
function pointChatgpt(ctx: PointerContext, authority: string): Record<string, string> {
  const userHome = userConfigDir(ctx.env, "CODEX_HOME", ".codex");
  const { table } = userCodexConfig(userHome);
  table.chatgpt_base_url = `${ctx.bases.chatgpt}/`;
  // Codex's `openai` provider, signed in with ChatGPT, lists its models at
  // https://chatgpt.com/backend-api/codex/models whatever `chatgpt_base_url` says (the workspace
  // routing moves its model requests only): its base at the proxy too, so that call is recorded.
  // Model requests still follow the routing, as this base shares `chatgpt_base_url`'s origin.
  table.openai_base_url ??= `${ctx.bases.chatgpt}/codex`;
  const linked = (name: string) => LINKED.has(name) || name === "auth.json";
  const home = linkedStandIn(userHome, join(ctx.tempDir, "codex-home"), linked);
  writeFileSync(join(home, "config.toml"), `${stringify(table)}\n`, { mode: 0o600 });
  const bundle = join(ctx.tempDir, "codex-trust.pem");
  writeFileSync(bundle, trustBundle(authority, ctx.env));
  return { CODEX_HOME: home, CODEX_CA_CERTIFICATE: bundle };
}

export const codexPointer: AgentPointer = {
  agent: "Codex",
  api: "OpenAI Responses",
  programs: ["codex"],
  point(ctx: PointerContext) {
    const { bases, tempDir, env, codexHttp, authority } = ctx;
    if (authority !== undefined && codexChatgptSignIn(env)) return pointChatgpt(ctx, authority);
    // Bedrock's providers sign for Bedrock's host and take no base URL: left as they are (the caveat).
    if (codexBedrockProvider(env, []) !== undefined) return {};
    const userHome = userConfigDir(env, "CODEX_HOME", ".codex");
    const { file, text } = userCodexConfig(userHome);
    const config = codexConfig(text, file, bases.openai, codexHttp !== true);
    const home = linkedStandIn(userHome, join(tempDir, "codex-home"), (name) => LINKED.has(name));
    // The user's config may hold tokens or headers of theirs: readable by the user alone, gone with the folder.
    writeFileSync(join(home, "config.toml"), config, { mode: 0o600 });
    return { CODEX_HOME: home };
  },
  caveat({ env }) {
    const bedrock = codexBedrockProvider(env, []);
    return (
      bedrock &&
      `Codex's model provider is ${bedrock} (Amazon Bedrock, each request signed for its host): Codex is left as it is and recorded with --forward only ('record -- codex' does that by itself)`
    );
  },
};
