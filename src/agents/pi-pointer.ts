/**
 * pi 0.85 takes a built-in provider's base URL from `providers.<id>.baseUrl` in models.json, which it
 * reads from its agent dir only (PI_CODING_AGENT_DIR, default ~/.pi/agent); the provider's models,
 * API keys and OAuth sign-ins stay as they are. The pointer makes a stand-in agent dir: the user's
 * models.json with the three base URLs set (every other entry kept) and links to everything else in
 * the user's agent dir, so settings, auth.json (pi rewrites it in place, through the link), skills,
 * extensions and sessions are the user's own. The user's files are never written.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { inputError } from "../errors.js";
import { isTable, linkedStandIn, readUserConfig, type Table, userConfigDir } from "./pointer-files.js";
import type { AgentPointer, PointerContext, ProxyBases } from "./pointer-types.js";

/** pi's built-in providers and their base URLs as its clients take them (Google's carries the version). */
const providerBases = (bases: ProxyBases): Record<string, string> => ({
  anthropic: bases.anthropic,
  openai: bases.openai,
  google: `${bases.gemini}/v1beta`,
});

function parseModels(text: string, file: string): Table {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (!isTable(parsed))
    throw inputError(file, undefined, "expected a JSON object without comments, to add the proxy's base URLs to it");
  return parsed;
}

/** The models.json pi gets: the user's (when there is one) with each built-in provider's baseUrl at the proxy. */
function piModels(userText: string | undefined, file: string, bases: ProxyBases): string {
  const models = userText === undefined ? {} : parseModels(userText, file);
  const providers = isTable(models.providers) ? models.providers : {};
  for (const [id, baseUrl] of Object.entries(providerBases(bases)))
    providers[id] = { ...(isTable(providers[id]) ? providers[id] : {}), baseUrl };
  return `${JSON.stringify({ ...models, providers }, null, 2)}\n`;
}

export const piPointer: AgentPointer = {
  agent: "pi",
  api: "Anthropic Messages, OpenAI Responses, Gemini",
  programs: ["pi"],
  point({ bases, tempDir, env }: PointerContext) {
    const userDir = userConfigDir(env, "PI_CODING_AGENT_DIR", ".pi", "agent");
    const file = join(userDir, "models.json");
    const models = piModels(readUserConfig(file, "pi models file"), file, bases);
    const dir = linkedStandIn(userDir, join(tempDir, "pi-agent"), (name) => name !== "models.json");
    // models.json may name API keys of the user's: readable by the user alone, gone with the folder.
    writeFileSync(join(dir, "models.json"), models, { mode: 0o600 });
    return { PI_CODING_AGENT_DIR: dir };
  },
};
