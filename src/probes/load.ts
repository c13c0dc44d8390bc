import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { inputError, UserError } from "../errors.js";
import { isSafeName, SAFE_NAME_RULE } from "../files/safe-path.js";
import { parseInput } from "../validate.js";
import { recalledProbeFields, rememberProbeFields } from "./probe-memo.js";
import { parseProbeYaml, readProbeText } from "./probe-yaml.js";
import type { Probe, ProbeAgent } from "./types.js";

/**
 * Parse and validate a probe file; every problem names the file and the field. The paths it names
 * (`agent.mcp.config`, `skills`, `skillLayers`, `cwd`, `profile`) are taken from the probe file's
 * folder and come back absolute, so a probe works from wherever it is run and wherever it is kept.
 */
export async function loadProbeFile(file: string, root: string): Promise<Probe> {
  const text = readProbeText(file);
  const { agent, ...fields } = recalledProbeFields<ProbeFields>(text, root) ?? (await validateProbe(file, text, root));
  return { file, ...fields, agent: probeAgentPaths(file, agent) };
}

/** The agent block with each path it names made absolute from the probe file's folder, and checked where it must exist. */
function probeAgentPaths(file: string, agent: ProbeAgent): ProbeAgent {
  const dir = dirname(file);
  const at = (path: string) => resolve(dir, path);
  const skillLayers =
    agent.skillLayers &&
    Object.fromEntries(Object.entries(agent.skillLayers).map(([layer, path]) => [layer, at(path)]));
  checkSkillLayers(file, skillLayers);
  return {
    ...agent,
    skills: agent.skills.map(at),
    skillLayers,
    mcp: mcpSetup(file, agent.mcp && { ...agent.mcp, config: at(agent.mcp.config) }),
    cwd: agent.cwd === undefined ? undefined : at(agent.cwd),
    profile: agent.profile === undefined ? undefined : at(agent.profile),
  };
}

type ProbeFields = Omit<Probe, "file">;

/** Parsed as YAML and checked by the schema, which is made only here: a probe the memo knows needs neither. */
async function validateProbe(file: string, text: string, root: string): Promise<ProbeFields> {
  const { probeSchema } = await import("./schema.js");
  const { value, fieldName } = parseProbeYaml(file, text, root);
  const fields: ProbeFields = parseInput(probeSchema, value, file, fieldName);
  rememberProbeFields(text, root, fields);
  return fields;
}

/** load_skill catalog layers: each an existing folder. */
function checkSkillLayers(file: string, layers: ProbeAgent["skillLayers"]): void {
  for (const [layer, path] of Object.entries(layers ?? {})) {
    if (!existsSync(path))
      throw inputError(
        file,
        `agent.skillLayers.${layer}`,
        `expected an existing folder of skills, but ${path} does not exist`,
      );
  }
}

/** The MCP config must exist; the run reads it by its absolute path. */
function mcpSetup(file: string, mcp: ProbeAgent["mcp"]): ProbeAgent["mcp"] {
  if (mcp && !existsSync(mcp.config))
    throw inputError(
      file,
      "agent.mcp.config",
      `expected an existing MCP config file, but ${mcp.config} does not exist`,
    );
  return mcp;
}

/**
 * A probe given by path (from the cwd) or by name: `p1` is `probes/p1.yaml` under the first of
 * `roots` that has it (the user's folder, then the checkout's shipped probes), else under the first.
 */
export function resolveProbePath(nameOrPath: string, roots: string | readonly string[]): string {
  if (nameOrPath.includes("\0")) throw new UserError(`probe ${JSON.stringify(nameOrPath)}: expected no NUL character`);
  if (nameOrPath.endsWith(".yaml") || nameOrPath.endsWith(".yml") || nameOrPath.includes("/"))
    return resolve(nameOrPath);
  if (!isSafeName(nameOrPath))
    throw new UserError(`probe "${nameOrPath}": expected a probe file path or ${SAFE_NAME_RULE}`);
  const files = (typeof roots === "string" ? [roots] : roots).map((root) => join(root, "probes", `${nameOrPath}.yaml`));
  return files.find((file) => existsSync(file)) ?? files[0]!;
}
