import { existsSync, mkdirSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { UserError } from "../errors.js";
import { isSafeName } from "../files/safe-path.js";
import { loadProfile } from "../runtime/load-profile.js";
import type { ImportSummary } from "./import-run.js";

/** Imported profiles are the user's data: kept under this git-ignored folder unless `--out` says otherwise. */
export const IMPORTED_PROFILES_DIR = join("profiles", "imported");

/** The name a profile imported from a run gets: the run folder's name (or run id) when it is a safe file name. */
export function importedName(runLabel: string): string {
  const base = basename(runLabel);
  return isSafeName(base) ? base : "imported";
}

/**
 * Writes the profile and reads it back through the runtime's own loader, so a file that loads is
 * what the command promises. A file already there is kept unless `force`: it may be hand-edited.
 */
export function writeImportedProfile(profile: object, out: string, force: boolean): void {
  const there = existsSync(out) ? statSync(out) : null;
  if (there && !there.isFile())
    throw new UserError(
      `${out}: --out expected a file, but ${there.isDirectory() ? "a folder" : "something else"} is there`,
    );
  if (there && !force)
    throw new UserError(`${out}: a file is already there; pass --force to replace it, or --out another file`);
  try {
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, `${JSON.stringify(profile, null, 2)}\n`);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new UserError(`${out}: --out cannot be written (${code ?? String(error)}); --out another file`);
  }
  try {
    loadProfile(out);
  } catch (error) {
    throw new Error(`profile import wrote a profile its own loader refuses: ${(error as Error).message}`);
  }
}

/** The summary as a reader wants it: what came back, what is empty, what to know. */
export function summaryLines(summary: ImportSummary, out: string): string[] {
  const lines = [`imported ${summary.run} (${summary.requests} requests) → ${out}`];
  for (const tool of summary.tools)
    lines.push(
      `  tool ${tool.name} (${tool.as}): description, parameters${tool.snippet ? ", snippet" : ""}${tool.guidelines > 0 ? `, ${tool.guidelines} guideline(s)` : ""}`,
    );
  lines.push(
    `  system prompt: a template of ${summary.template.lines} lines with ${summary.template.placeholders.join(" ") || "no placeholders"}`,
  );
  lines.push(`  skills preamble: ${summary.skillsPreamble ? "recovered" : "not in the capture"}`);
  if (summary.notRecovered.length > 0) {
    lines.push(`not recovered (written empty; a probe that needs them will not match the capture's agent):`);
    for (const gap of summary.notRecovered) lines.push(`  - ${gap.field}: ${gap.why}`);
  }
  if (summary.notes.length > 0) lines.push("notes:", ...summary.notes.map((note) => `  - ${note}`));
  return lines;
}
