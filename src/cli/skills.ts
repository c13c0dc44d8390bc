import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { LineWriter } from "../analysis/table/output.js";
import { TableOutput } from "../analysis/table/table-output.js";
import type { TableLook } from "../analysis/table/table-style.js";
import { discoverSkills, skillSources } from "../skills/discover.js";
import type { SkillDiagnostic, SkillLoadResult } from "../skills/types.js";
import { parseCommand, usageError } from "./args.js";
import { tableLook } from "./terminal.js";

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

/**
 * A table fitted to the terminal; paths and messages (the last columns) break onto more lines, at
 * a path's `/` or between words, rather than being cut, since the path is what the reader looks for.
 */
const fittedTable = (head: string[], look: TableLook) =>
  new TableOutput(head, { look, wrap: head.map((name) => ["root", "path", "message"].includes(name)) });

async function writeDiagnostics(diagnostics: SkillDiagnostic[], out: LineWriter, look: TableLook): Promise<void> {
  const table = fittedTable(["type", "message", "path"], look);
  for (const d of diagnostics) {
    // A collision names both files: the loser is the row's path, the winner is what it lost to.
    const message = d.collision ? `${d.message} (kept ${d.collision.winnerPath})` : d.message;
    table.push([d.type, message, d.path]);
  }
  await table.write(out);
}

async function printText(
  result: SkillLoadResult,
  roots: ReturnType<typeof skillSources>,
  showDiagnostics: boolean,
): Promise<void> {
  const out = new LineWriter(process.stdout);
  const look = tableLook(false);
  const rootsTable = fittedTable(["scope", "mode", "root"], look);
  for (const root of roots) rootsTable.push([root.scope, root.mode, root.root]);
  await out.line("Roots, in load order (earlier roots win name collisions):");
  await rootsTable.write(out);

  if (result.skills.length === 0) await out.line("\nNo skills would be loaded.");
  else {
    const skillsTable = fittedTable(["name", "scope", "in prompt", "path"], look);
    for (const skill of result.skills) {
      const inPrompt = skill.disableModelInvocation ? "no (disable-model-invocation)" : "yes";
      skillsTable.push([skill.name, skill.source.scope, inPrompt, skill.filePath]);
    }
    await out.line(`\nSkills (${result.skills.length}):`);
    await skillsTable.write(out);
  }

  const count = result.diagnostics.length;
  if (count === 0) await out.line("\nNo diagnostics.");
  else if (showDiagnostics) {
    await out.line(`\nDiagnostics (${count}):`);
    await writeDiagnostics(result.diagnostics, out, look);
  } else await out.line(`\n${count} diagnostic${count === 1 ? "" : "s"}; run with --diagnostics to list them.`);
  await out.flush();
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
  else await printText(result, roots, values.diagnostics ?? false);
  return 0;
}
