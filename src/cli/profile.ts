import { join, resolve } from "node:path";
import { resolveRun, warnOnStderr } from "../analysis/load-run.js";
import { hangingIndent, LineWriter } from "../analysis/table/output.js";
import { UserError } from "../errors.js";
import { importProfile, PROGRESS_EVERY } from "../profile-import/import-run.js";
import { IMPORTED_PROFILES_DIR, importedName, summaryLines, writeImportedProfile } from "../profile-import/write.js";
import { PROJECT_ROOT } from "../project-root.js";
import { terminalWidth } from "../text/terminal-width.js";
import { parseCommand } from "./args.js";

export const help = `Usage: payload-probe profile import <run...> [options]

Builds a profile from the requests one or more runs captured — of this runtime, of a real agent behind
'mock' or 'proxy', on any of the three wire APIs — so the runtime can send that agent's texts:
each tool's description and parameter descriptions (the whole schema when it is not shaped as the
runtime builds it), the tool-list snippets and guidelines, the
system prompt as a template (tool list, guidelines, skills block, working directory, package
folder and date lines made placeholders), the skills preamble and the MCP gateway's texts.
Use it with 'run --profile FILE' or a probe's agent.profile. What no request showed is written
empty and listed under "not recovered" (and in the file's imported.notRecovered).
With several runs (p1 p3 p4 of one agent) each text comes from the first request that shows it;
the system prompt template comes from the first run's first request. A long run is read with a
line on stderr every ${PROGRESS_EVERY} requests.

  <run>         a run folder (runs/p1), a probe name with a folder under runs/ (p1), a run id
                from runs/payload-probe.db, or <probe>@N (the N-th latest run of a probe)
  --out FILE    where to write it (default: ${IMPORTED_PROFILES_DIR}/<first run's name>.json, git-ignored)
  --name NAME   the profile's name (default: the first run's name)
  --force       replace a file already at --out
  --json        print the summary of what was recovered as JSON
  --runs DIR    where run folders and payload-probe.db live (default: runs/)
  -h, --help    show this help

Exit: 0 written, 2 bad usage, a run that cannot be found or read, a run with no agent requests,
or a file already at --out.`;

export async function main(argv: string[]): Promise<number> {
  const args = parseCommand(argv, {
    name: "profile",
    help,
    options: {
      out: { type: "string" },
      name: { type: "string" },
      force: { type: "boolean" },
      json: { type: "boolean" },
    } as const,
    positionals: ["import", "<run...>"],
  });
  if (typeof args === "number") return args;
  const { values, positionals, runsDir } = args;
  const sources = positionals.slice(1).map((spec) => resolveRun(spec, { runsDir, warn: warnOnStderr }));
  const name = values.name ?? importedName(sources[0]!.label);
  if (name.trim() === "") throw new UserError("profile: --name expected a non-empty name");
  const out = values.out
    ? resolve(values.out)
    : join(PROJECT_ROOT, IMPORTED_PROFILES_DIR, `${importedName(sources[0]!.label)}.json`);
  const { profile, summary } = importProfile(sources, name, (label, requests) =>
    process.stderr.write(`profile import: ${requests} requests of ${label} read …\n`),
  );
  writeImportedProfile(profile, out, values.force === true);
  if (values.json) console.log(JSON.stringify({ out, ...summary }, null, 2));
  else {
    // Tool names are captured: the writer makes them printable. Long lines carry on past their indent.
    const lines = new LineWriter(process.stdout);
    for (const line of summaryLines(summary, out)) await lines.wrappedLine(line, terminalWidth(), hangingIndent);
    await lines.flush();
  }
  return 0;
}
