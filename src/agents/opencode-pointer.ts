/**
 * opencode 1.18 merges the JSON in OPENCODE_CONFIG_CONTENT over every config file (global, project,
 * OPENCODE_CONFIG) key by key, so setting each built-in provider's `options.baseURL` there points it
 * at the proxy and keeps the rest of the user's config. Nothing is written. Its providers are AI SDK
 * ones, whose base URLs carry the API version: Anthropic's `…/v1`, OpenAI's `…/v1` (opencode sends
 * OpenAI models to the Responses API), Google's `…/v1beta`.
 */
import { UserError } from "../errors.js";
import { isTable, type Table } from "./pointer-files.js";
import type { AgentPointer, PointerContext, ProxyBases } from "./pointer-types.js";

const VARIABLE = "OPENCODE_CONFIG_CONTENT";

/** The base URL of each opencode provider we point, as its AI SDK package takes it. */
const providerBases = (bases: ProxyBases): Record<string, string> => ({
  anthropic: `${bases.anthropic}/v1`,
  openai: bases.openai,
  google: `${bases.gemini}/v1beta`,
});

/** The user's own inline config, when they set one: ours is merged into it, never replacing it. */
function userContent(env: NodeJS.ProcessEnv): Table {
  const text = env[VARIABLE];
  if (!text?.trim()) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  // The value itself is never echoed: it may hold keys.
  if (!isTable(parsed)) throw new UserError(`${VARIABLE}: expected a JSON object (opencode's inline config)`);
  return parsed;
}

/** The inline config opencode gets: the user's, with each provider's `options.baseURL` at the proxy. */
function opencodeContent(bases: ProxyBases, env: NodeJS.ProcessEnv): string {
  const config = userContent(env);
  const providers = isTable(config.provider) ? config.provider : {};
  for (const [id, baseURL] of Object.entries(providerBases(bases))) {
    const provider = isTable(providers[id]) ? providers[id] : {};
    const options = isTable(provider.options) ? provider.options : {};
    providers[id] = { ...provider, options: { ...options, baseURL } };
  }
  return JSON.stringify({ ...config, provider: providers });
}

export const opencodePointer: AgentPointer = {
  agent: "opencode",
  api: "Anthropic Messages, OpenAI Responses, Gemini",
  programs: ["opencode"],
  point: ({ bases, env }: PointerContext) => ({ [VARIABLE]: opencodeContent(bases, env) }),
};
