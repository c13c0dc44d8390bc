import { homedir } from "node:os";
import { join, resolve } from "node:path";
import Table from "cli-table3";
import { discoverSkills, skillSources } from "../skills/discover.js";
import type { SkillDiagnostic, SkillLoadResult } from "../skills/types.js";
import { printable } from "../terminal-text.js";
import { parseCommand, usageError } from "./args.js";

export const help = `Usage: payload-probe skills list [paths...] [options]

Shows which skills pi-style discovery would load, from which root, and every diagnostic: the
command to run when a skill does not show up.

  paths              extra skill files or folders, as --skill (loaded last; they lose name collisions)
  --diagnostics      list every diagnostic (otherwise only their number is shown)
  --json             print roots, skills and diagnostics as JSON
  --cwd DIR          the session's working directory (default: the current one)
  --agent-dir DIR    the agent dir (default: $PI_CODING_AGENT_DIR or ~/.pi/agent)
  --no-skills        drop the discovered roots; paths still load
  --trusted          trust the project, so .pi/skills and .agents/skills in the project load
  -h, --help         show this help

Exit: 0 listed (diagnostics do not change it), 2 bad usage.`;

const OPTIONS = {
  diagnostics: { type: "boolean" },
  json: { type: "boolean" },
  cwd: { type: "string" },
  "agent-dir": { type: "string" },
  "no-skills": { type: "boolean" },
  trusted: { type: "boolean" },
} as const;

const plainTable = (head: string[]) => new Table({ head, style: { head: [], border: [] } });
/** A row's cells as printed: names, messages and paths come from skill files and folders. */
const cells = (row: string[]) => row.map((cell) => printable(cell, { lines: true }));

function diagnosticsTable(diagnostics: SkillDiagnostic[]): string {
  const table = plainTable(["type", "message", "path"]);
  for (const d of diagnostics) {
    // A collision names both files: the loser is the row's path, the winner is what it lost to.
    const message = d.collision ? `${d.message} (kept ${d.collision.winnerPath})` : d.message;
    table.push(cells([d.type, message, d.path]));
  }
  return table.toString();
}

function printText(result: SkillLoadResult, roots: ReturnType<typeof skillSources>, showDiagnostics: boolean): void {
  const rootsTable = plainTable(["scope", "mode", "root"]);
  for (const root of roots) rootsTable.push(cells([root.scope, root.mode, root.root]));
  console.log(`Roots, in load order (earlier roots win name collisions):\n${rootsTable.toString()}`);

  if (result.skills.length === 0) console.log("\nNo skills would be loaded.");
  else {
    const skillsTable = plainTable(["name", "scope", "in prompt", "path"]);
    for (const skill of result.skills) {
      skillsTable.push(
        cells([
          skill.name,
          skill.source.scope,
          skill.disableModelInvocation ? "no (disable-model-invocation)" : "yes",
          skill.filePath,
        ]),
      );
    }
    console.log(`\nSkills (${result.skills.length}):\n${skillsTable.toString()}`);
  }

  const count = result.diagnostics.length;
  if (count === 0) console.log("\nNo diagnostics.");
  else if (showDiagnostics) console.log(`\nDiagnostics (${count}):\n${diagnosticsTable(result.diagnostics)}`);
  else console.log(`\n${count} diagnostic${count === 1 ? "" : "s"}; run with --diagnostics to list them.`);
}

export async function main(argv: string[]): Promise<number> {
  const args = parseCommand(argv, { name: "skills", help, options: OPTIONS, runs: false });
  if (typeof args === "number") return args;
  const { values, positionals } = args;
  const [action, ...paths] = positionals;
  if (action !== "list")
    throw usageError("skills", `expected the subcommand "list"${action ? `, got "${action}"` : ""}`);
  const home = homedir();
  const options = {
    cwd: resolve(values.cwd ?? process.cwd()),
    agentDir: resolve(values["agent-dir"] ?? process.env.PI_CODING_AGENT_DIR ?? join(home, ".pi", "agent")),
    home,
    skillPaths: paths,
    noSkills: values["no-skills"] ?? false,
    trusted: values.trusted ?? false,
  };
  const result = discoverSkills(options);
  const roots = skillSources(options);
  if (values.json)
    console.log(JSON.stringify({ roots, skills: result.skills, diagnostics: result.diagnostics }, null, 2));
  else printText(result, roots, values.diagnostics ?? false);
  return 0;
}
