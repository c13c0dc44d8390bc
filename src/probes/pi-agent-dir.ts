/**
 * The isolated agent dir a real pi run reads: models.json pointing the probe's provider at the mock,
 * settings, and the probe's MCP config placed where the adapter reads it. Nothing of the user's own
 * pi configuration is seen, since HOME and PI_CODING_AGENT_DIR both point into the probe's workspace.
 */
import { writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { inputError } from "../errors.js";
import { readInputFile } from "../files/input-file.js";
import { modelLimits } from "../providers/models.js";
import type { Probe } from "./types.js";

/**
 * What models.json says beyond the runtime's model table for the documented model (pi-runtime.md §8):
 * its input kinds and the chat-completions compat flags the runtime's codec assumes for it.
 */
const KNOWN_EXTRAS: Record<string, { input: string[]; compat: Record<string, unknown> }> = {
  "token-plan/qwen3.8-flash": {
    input: ["text", "image"],
    compat: {
      thinkingFormat: "qwen",
      supportsDeveloperRole: false,
      supportsStore: false,
      supportsReasoningEffort: true,
    },
  },
};

/** `provider/model` split at its first slash; a bare id gets a provider named after the mock. */
export function providerAndModel(ref: string): { provider: string; model: string } {
  const slash = ref.indexOf("/");
  return slash > 0 ? { provider: ref.slice(0, slash), model: ref.slice(slash + 1) } : { provider: "mock", model: ref };
}

/** models.json: one provider, one model, with the reasoning flag and limits the runtime's model table gives. */
export function modelsJson(probe: Probe, baseUrl: string): unknown {
  const limits = modelLimits(probe.model.id);
  const { provider, model } = providerAndModel(probe.model.id);
  const extras = KNOWN_EXTRAS[probe.model.id];
  return {
    providers: {
      [provider]: {
        baseUrl,
        api: probe.model.api,
        // Not a credential: the mock accepts any key, and pi needs one to send a request.
        apiKey: "mock-key",
        ...(extras ? { compat: extras.compat } : {}),
        models: [
          {
            id: model,
            reasoning: limits.reasoning,
            input: extras?.input ?? ["text"],
            contextWindow: limits.contextWindow,
            maxTokens: limits.maxTokens,
          },
        ],
      },
    },
  };
}

interface ServerEntry {
  command?: string;
  cwd?: string;
  [key: string]: unknown;
}

/**
 * The probe's MCP config as the adapter inside pi reads it: a stdio server starts in the config's
 * folder (or its own `cwd` taken from there), as the runtime starts it (the fixtures name
 * `../dist/stub-mcp/...` relative to it), since pi itself runs in the probe's workspace. The path is
 * written resolved (no trailing slash): the adapter hashes `cwd` as written, the cache priming hashes
 * it resolved, and both must agree.
 */
export function piMcpConfig(configPath: string): Record<string, unknown> {
  let config: { mcpServers?: Record<string, ServerEntry>; [key: string]: unknown };
  const text = readInputFile(configPath, "MCP config").toString("utf8");
  try {
    config = JSON.parse(text);
  } catch (error) {
    throw inputError(configPath, undefined, `expected a JSON MCP config: ${(error as Error).message}`);
  }
  const servers: Record<string, ServerEntry> = {};
  for (const [name, entry] of Object.entries(config.mcpServers ?? {}))
    servers[name] =
      entry.command === undefined ? entry : { ...entry, cwd: resolve(dirname(configPath), entry.cwd ?? ".") };
  return { ...config, mcpServers: servers };
}

/** Writes models.json, settings.json and (with MCP) mcp.json; returns the mcp.json path when written. */
export function writePiAgentDir(probe: Probe, agentDir: string, baseUrl: string): { mcpConfig: string | undefined } {
  const write = (name: string, value: unknown) =>
    writeFileSync(join(agentDir, name), `${JSON.stringify(value, null, 2)}\n`);
  write("models.json", modelsJson(probe, baseUrl));
  // The model is chosen on the command line; these keep pi from doing anything a probe did not ask for.
  write("settings.json", { quietStartup: true, enableInstallTelemetry: false });
  if (!probe.agent.mcp) return { mcpConfig: undefined };
  const mcpConfig = join(agentDir, "mcp.json");
  write("mcp.json", piMcpConfig(probe.agent.mcp.config));
  return { mcpConfig };
}
