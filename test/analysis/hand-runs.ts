import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadProbeFile } from "../../src/probes/load.js";
import type { RunResult } from "../../src/probes/run-options.js";
import { runProbe } from "../../src/probes/runner.js";
import { PROJECT_ROOT } from "../../src/project-root.js";

/** A probe written to a temp folder and run there: its runs folder and workspace stay in `dir`. */
export async function runHandProbe(dir: string, name: string, yaml: string, root = PROJECT_ROOT): Promise<RunResult> {
  mkdirSync(join(dir, "probes"), { recursive: true });
  const file = join(dir, "probes", `${name}.yaml`);
  writeFileSync(file, yaml);
  return runProbe(await loadProbeFile(file, root), {
    root,
    runsDir: join(dir, "runs"),
    workspaceRoot: join(dir, "ws"),
    database: false,
  });
}

/** A two-turn probe without MCP: a read, its answer, then a second user message answered with text. */
export function twoTurnProbe(name: string, tools: string, extraFirstTurnCall = false): string {
  const calls = extraFirstTurnCall ? [`    - call: read\n      args: { path: other.txt }`] : [];
  return `name: ${name}
agent:
  tools: ${tools}
  noSkills: true
model:
  script:
    - call: read
      args: { path: missing.txt }
${calls.join("\n")}${calls.length ? "\n" : ""}    - text: READ-DONE
    - text: SECOND-DONE
prompts:
  - "PROBE-A. Read missing.txt."
  - "PROBE-B. Say done."
markers:
  done: { in: messages, match: READ-DONE }
`;
}
