/**
 * Tables as a user sees them: fitted to 80 columns (COLUMNS, since a test's stdout is a pipe), whole
 * with --wide, and coloured only when asked and never under NO_COLOR. run and check are the built CLI;
 * report and diff run in this process (test/fixtures/cli-in-process.ts), where COLUMNS, NO_COLOR and
 * FORCE_COLOR reach them as they reach a child.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../../src/project-root.js";
import { runHandProbe, twoTurnProbe } from "../analysis/hand-runs.js";
import { runInProcess } from "../fixtures/cli-in-process.js";

// biome-ignore lint/suspicious/noControlCharactersInRegex: an SGR colour code is what this looks for.
const COLOUR_CODE = /\u001b\[\d+m/;

/** What a command must have printed: check exits 1 with its table, every other command 0 with nothing on stderr. */
function expectDone(args: string[], status: number | null, stderr: string): void {
  // check reports its progress on stderr, and with a workspace of its own (whose path is in the system
  // prompt) it finds regressions against the committed baselines: exit 1, the table printed all the same.
  if (args[0] === "check") expect(status).toBe(1);
  else expect({ status, stderr }).toEqual({ status: 0, stderr: "" });
}

/** The built CLI with only the environment given (no inherited COLUMNS, NO_COLOR or FORCE_COLOR). */
function spawned(env: Record<string, string>, ...args: string[]) {
  const base = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" };
  const child = spawnSync(process.execPath, [join(PROJECT_ROOT, "dist/cli/main.js"), ...args], {
    encoding: "utf8",
    timeout: 120_000,
    env: { ...base, ...env },
  });
  expectDone(args, child.status, child.stderr);
  return child.stdout;
}

/** A command in this process with `env`'s width and colour variables, the others of them unset as for `spawned`. */
async function cli(env: Record<string, string>, ...args: string[]) {
  const unset = { COLUMNS: undefined, NO_COLOR: undefined, FORCE_COLOR: undefined };
  const { status, stdout, stderr } = await runInProcess({ ...unset, ...env }, ...args);
  expectDone(args, status, stderr);
  return stdout;
}

const widest = (text: string) => Math.max(...text.split("\n").map((line) => [...line].length));

let dir: string;
let runs: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "pp-tables-"));
  runs = join(dir, "runs");
  await runHandProbe(dir, "one", twoTurnProbe("one", "read"));
  await runHandProbe(dir, "two", twoTurnProbe("two", "read,bash,edit,write,grep,find,ls"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("tables on the command line", () => {
  it("report and diff fit 80 columns, leaving out what matters least and saying so; --wide keeps every cell whole", async () => {
    for (const args of [
      ["report", "two"],
      ["report", "two", "--segments"],
      ["diff", "one", "two"],
    ]) {
      const fitted = await cli({ COLUMNS: "80" }, ...args, "--runs", runs);
      const tableLines = fitted.split("\n").filter((line) => /^[┌│├└]/.test(line));
      expect(tableLines.length).toBeGreaterThan(3);
      expect(widest(tableLines.join("\n"))).toBeLessThanOrEqual(80);
      if (args[0] === "report") expect(widest(fitted)).toBeLessThanOrEqual(80);
      const wide = await cli({ COLUMNS: "80" }, ...args, "--wide", "--runs", runs);
      if (args[0] === "report" && args.length === 2) {
        expect(fitted).not.toContain("…");
        expect(fitted).toContain("left out at this width: roles");
        expect(widest(wide)).toBeGreaterThan(80);
        expect(wide).toContain("[read, bash, edit, write, grep, find, ls]");
      }
    }
  });

  it("run and check fit their tables and legends to 80 columns; run ends pointing to report, show and view", () => {
    const env = { COLUMNS: "80", TMPDIR: dir, PAYLOAD_PROBE_WORKSPACE: join(dir, "ws-cli") };
    const run = spawned(env, "run", "p1", "--runs", join(dir, "p1-runs"));
    const check = spawned(env, "check", "p1", "--runs", join(dir, "check-runs"));
    for (const out of [run, check]) {
      const drawn = out.split("\n").filter((line) => /^[┌│├└]|^tokens |^prefix|^regressions/.test(line));
      expect(drawn.length).toBeGreaterThan(4);
      expect(widest(drawn.join("\n"))).toBeLessThanOrEqual(80);
    }
    expect(run).toContain("left out at this width: roles, markers");
    const runDir = join(dir, "p1-runs", "p1");
    // At 80 columns the hint is wrapped, each further line under two spaces, with no ` · ` left at
    // a break. Where it breaks depends on the temporary folder's length (a long TMPDIR breaks inside
    // a command, a longer one inside a path), so its characters are compared apart from the spaces
    // and separators.
    const lines = run.trimEnd().split("\n");
    const hint = lines.slice(lines.findIndex((line) => line.startsWith("see it: ")));
    expect(hint.length).toBeGreaterThan(1);
    expect(widest(hint.join("\n"))).toBeLessThanOrEqual(80);
    for (const line of hint.slice(1)) expect(line).toMatch(/^ {2}\S/);
    for (const line of hint) expect(line.trim()).not.toMatch(/^·|·$/);
    const squeezed = (text: string) => text.replace(/\s+|·/g, "");
    expect(squeezed(hint.join(""))).toBe(
      // Started as `node dist/cli/main.js`, the hint names that (src/text/invoked-as.ts).
      squeezed(`see it: node dist/cli/main.js report ${runDir} · show ${runDir} 1 · view ${runDir}`),
    );
  });

  it("a pipe without COLUMNS gets every cell whole", async () => {
    expect(await cli({}, "report", "two", "--runs", runs)).toContain("[read, bash, edit, write, grep, find, ls]");
  });

  it("report names its token encoding and right-aligns figures with their units", async () => {
    const out = await cli({ COLUMNS: "200" }, "report", "one", "--runs", runs);
    expect(out).toMatch(/^tokens o200k_base, t\/s\/m = tools\/system\/messages/);
    const rows = out.split("\n").filter((line) => /^│ +\d+ │/.test(line));
    expect(rows).toHaveLength(3);
    // Right-aligned: every row's body cell ends at the same column, its unit last.
    const bodyEnds = rows.map((row) => row.search(/\d+ B │/) + row.match(/\d+ B │/)![0].length);
    expect(new Set(bodyEnds).size).toBe(1);
    // No rule between rows: the head's rule is the only ├ line.
    expect(out.split("\n").filter((line) => line.startsWith("├"))).toHaveLength(1);
  });

  it("colour only when asked (FORCE_COLOR) and never with NO_COLOR", async () => {
    for (const args of [
      ["report", "two"],
      ["diff", "one", "two"],
    ]) {
      expect(await cli({}, ...args, "--runs", runs)).not.toMatch(COLOUR_CODE);
      expect(await cli({ FORCE_COLOR: "1" }, ...args, "--runs", runs)).toMatch(COLOUR_CODE);
      expect(await cli({ FORCE_COLOR: "1", NO_COLOR: "1" }, ...args, "--runs", runs)).not.toMatch(COLOUR_CODE);
    }
  });

  it("--plain names every figure with its unit", async () => {
    const [first] = (await cli({}, "report", "one", "--plain", "--runs", runs)).split("\n");
    expect(first).toMatch(
      /^seq=1 kind=loop toolCount=1 tools=\d+B system=\d+B messages=\d+B body=\d+B tokens=\d+ roles=system>user done=0 conversation=c1 role=main$/,
    );
  });
});
