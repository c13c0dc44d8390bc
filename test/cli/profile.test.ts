/**
 * `payload-probe profile import`. The built CLI runs as a child for its help, its usage errors, a
 * missing run (exit 2 without a stack), and one import of each output (the JSON summary, the text
 * summary: the smoke tests); the run it imports, and the other imports whose output or exit code is
 * checked, run in this process (test/fixtures/cli-in-process.ts), every path given absolute.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliInScratch } from "../fixtures/cli-in-process.js";
import { cliIn } from "./scratch-cli.js";

const scratch = mkdtempSync(join(tmpdir(), "pp-profile-cli-"));
const runs = join(scratch, "runs");
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
/** `payload-probe <args>` in this process, with the scratch folder's workspace and temp folder. */
const inProcess = (...args: string[]) => cliInScratch(scratch, ...args);
beforeAll(async () => {
  expect((await inProcess("run", "p3", "--runs", runs, "--no-db")).code).toBe(0);
});

describe("payload-probe profile import", () => {
  it("--help says what it recovers, where it writes and the exit codes", () => {
    const help = cliIn(scratch, "profile", "--help");
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("Usage: payload-probe profile import <run...>");
    // The help is filled to 80 columns, so a phrase may carry on to the next line.
    expect(help.stdout.replace(/\s+/g, " ")).toContain("profiles/imported/<first run's name>.json, git-ignored");
    expect(help.stdout).toContain("Exit: 0 written, 2");
  });

  it("--json summarizes what was recovered and what was written empty; the file runs", async () => {
    const out = join(scratch, "p3.json");
    const result = cliIn(scratch, "profile", "import", "p3", "--runs", runs, "--out", out, "--json");
    expect(result.code).toBe(0);
    const summary = JSON.parse(result.stdout);
    expect(summary).toMatchObject({ out, requests: 2, skillsPreamble: true });
    expect(summary.tools).toEqual([{ name: "read", as: "built-in", snippet: true, guidelines: 1 }]);
    expect(summary.template.placeholders).toEqual([
      "{TOOLS}",
      "{GUIDELINES}",
      "{PKG}",
      "{APPEND}",
      "{CONTEXT}",
      "{SKILLS}",
      "{CWD}",
    ]);
    expect(summary.notRecovered).toContainEqual({ field: "skills.useBash", why: "only the other variant was sent" });
    expect(summary.notRecovered).toContainEqual({ field: "tools.bash", why: "no request sent this tool" });
    expect(JSON.parse(readFileSync(out, "utf8")).imported.notRecovered).toEqual(summary.notRecovered);
    const again = await inProcess("run", "p3", "--runs", join(scratch, "again"), "--no-db", "--profile", out);
    expect(again.code).toBe(0);
  });

  it("an existing file is kept unless --force", async () => {
    const out = join(scratch, "kept.json");
    expect(cliIn(scratch, "profile", "import", "p3", "--runs", runs, "--out", out).code).toBe(0);
    const refused = await inProcess("profile", "import", "p3", "--runs", runs, "--out", out);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toBe(
      `payload-probe: ${out}: a file is already there; pass --force to replace it, or --out another file\n`,
    );
    expect((await inProcess("profile", "import", "p3", "--runs", runs, "--out", out, "--force")).code).toBe(0);
  });

  it("a folder at --out, or under a file, is exit 2 in one line, with --force too (issue 21)", async () => {
    const folder = join(scratch, "a-folder");
    mkdirSync(folder);
    const refused = await inProcess("profile", "import", "p3", "--runs", runs, "--out", folder, "--force");
    expect(refused.code).toBe(2);
    expect(refused.stderr).toBe(`payload-probe: ${folder}: --out expected a file, but a folder is there\n`);
    const file = join(scratch, "plain.txt");
    writeFileSync(file, "mine\n");
    const under = join(file, "p3.json");
    const unwritable = await inProcess("profile", "import", "p3", "--runs", runs, "--out", under);
    expect(unwritable.code).toBe(2);
    expect(unwritable.stderr).toBe(`payload-probe: ${under}: --out cannot be written (EEXIST); --out another file\n`);
    expect(readFileSync(file, "utf8")).toBe("mine\n");
  });

  it("not a run → exit 2 naming it, no stack, nothing written", () => {
    const out = join(scratch, "never.json");
    const result = cliIn(scratch, "profile", "import", "no-such-run", "--runs", runs, "--out", out);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^payload-probe: no run "no-such-run": expected a run folder/);
    expect(result.stderr).not.toContain("    at ");
    expect(existsSync(out)).toBe(false);
  });

  it("no subcommand or an unknown one: one line naming what was expected, exit 2", () => {
    const result = cliIn(scratch, "profile", "p3");
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(
      /^payload-probe: profile: expected import <run\.\.\.>, got "p3"\. See '.+ profile --help'\.\n$/,
    );
    const unknown = cliIn(scratch, "profile", "export", "p3");
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^payload-probe: profile: expected import <run\.\.\.>, got "export"\. /);
  });
});
