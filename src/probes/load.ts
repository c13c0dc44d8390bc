import { existsSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { inputError, UserError } from "../errors.js";
import { isSafeName, SAFE_NAME_RULE } from "../safe-path.js";
import { parseInput } from "../validate.js";
import { recalledProbeFields, rememberProbeFields } from "./probe-memo.js";
import { parseProbeYaml, readProbeText } from "./probe-yaml.js";
import type { Probe, ProbeAgent } from "./types.js";

/** Parse and validate a probe file; every problem names the file and the field. */
export async function loadProbeFile(file: string, root: string): Promise<Probe> {
  const text = readProbeText(file);
  const { agent, ...fields } = recalledProbeFields<ProbeFields>(text, root) ?? (await validateProbe(file, text, root));
  checkSkillLayers(file, agent.skillLayers, root);
  return { file, ...fields, agent: { ...agent, mcp: mcpSetup(file, agent.mcp, root) } };
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

/** load_skill catalog layers: each an existing folder, relative to the checkout. */
function checkSkillLayers(file: string, layers: ProbeAgent["skillLayers"], root: string): void {
  for (const [layer, dir] of Object.entries(layers ?? {})) {
    const path = isAbsolute(dir) ? dir : join(root, dir);
    if (!existsSync(path))
      throw inputError(
        file,
        `agent.skillLayers.${layer}`,
        `expected an existing folder of skills, but ${path} does not exist`,
      );
  }
}

/** The MCP config, relative to the checkout, must exist; the run reads it by its absolute path. */
function mcpSetup(file: string, mcp: ProbeAgent["mcp"], root: string): ProbeAgent["mcp"] {
  if (!mcp) return undefined;
  const config = isAbsolute(mcp.config) ? mcp.config : join(root, mcp.config);
  if (!existsSync(config))
    throw inputError(file, "agent.mcp.config", `expected an existing MCP config file, but ${config} does not exist`);
  return { ...mcp, config };
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
