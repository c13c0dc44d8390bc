/**
 * Every line the CLI prints fits the terminal (issue 22), checked against a run of every shipped
 * probe: report (table and --segments), show, diff of the probes made to be compared, run, check and
 * every --help, at COLUMNS=80, and report and diff at 60 and 120 too. What matters most stays
 * readable: the prefix column of report, where and why the cache prefix broke, is whole in every row,
 * and what a narrow table left out is named in its legend.
 *
 * `run all` and the overview's --help run the built CLI as a child, with COLUMNS as a user's shell
 * sets it; the rest runs each command in this process (test/fixtures/cli-in-process.ts): the width
 * reaches a command the same way, and a child per command, probe and width cost this file 50 s.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../../src/project-root.js";
import { runInProcess } from "../fixtures/cli-in-process.js";

// biome-ignore lint/suspicious/noControlCharactersInRegex: colour codes take no columns, so they are taken out.
const COLOUR_CODE = /\u001b\[[0-9;]*m/g;

/** Columns a line takes: what we print is one column per code point (no wide characters). */
const columns = (line: string) => [...line.replace(COLOUR_CODE, "")].length;

/** The lines of `text` wider than `width`, to name them when the assertion fails. */
const over = (text: string, width: number) => text.split("\n").filter((line) => columns(line) > width);

let scratch: string;
let runs: string;
let runOutput: string;

/** What the CLI is given besides its arguments: the width, and a workspace and temp folder in the scratch folder. */
const environment = (width: number) => ({
  COLUMNS: String(width),
  PAYLOAD_PROBE_WORKSPACE: join(scratch, "ws"),
  TMPDIR: scratch,
});

/** The built CLI as a child (a test's stdout is a pipe, so COLUMNS is the width it fits to). */
function spawned(width: number, ...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const child = spawnSync(process.execPath, [join(PROJECT_ROOT, "dist/cli/main.js"), ...args], {
    cwd: PROJECT_ROOT,
    encoding: "utf8",
    timeout: 120_000,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...environment(width) },
  });
  return { status: child.status, stdout: child.stdout, stderr: child.stderr };
}

/** A command at `width`, in this process. */
const cli = (width: number, ...args: string[]) => runInProcess(environment(width), ...args);

/** stdout of a command that must succeed. */
async function printed(width: number, ...args: string[]): Promise<string> {
  const { status, stdout, stderr } = await cli(width, ...args);
  expect({ status, stderr }).toEqual({ status: 0, stderr: "" });
  return stdout;
}

const PROBES = readdirSync(join(PROJECT_ROOT, "probes"))
  .filter((name) => name.endsWith(".yaml"))
  .map((name) => name.slice(0, -".yaml".length));

/** Pairs the probes were written to be compared in (the probe table in docs/probes.md), and two that differ a lot. */
const PAIRS = [
  ["p1", "p1-anthropic"],
  ["p1", "p1-responses"],
  ["p0", "p0-cold"],
  ["p2-direct", "p2-proxy"],
  ["p4", "p4-hidden"],
  ["p5", "p5-none"],
  ["p5", "p5-bash"],
  ["seq-namespace", "seq-search"],
  ["p1", "p2"],
  ["p2", "p3"],
];

interface Row {
  seq: number;
  tokens: { total: number } | null;
  prefixSummary: string;
}

const rowsRead = new Map<string, Row[]>();

/** A run's report as JSON (the width does not change it), read once. */
async function reportRows(probe: string): Promise<Row[]> {
  let rows = rowsRead.get(probe);
  if (!rows) {
    rows = JSON.parse(await printed(80, "report", probe, "--json", "--runs", runs)) as Row[];
    rowsRead.set(probe, rows);
  }
  return rows;
}

/**
 * The prefix column of a report table, a row at a time: the last cell of each row, with the lines
 * it wrapped onto joined, spaces left out (a break drops the space it was made at).
 */
function prefixCells(table: string): string[] {
  const cells: string[] = [];
  for (const line of table.split("\n").filter((l) => l.startsWith("│"))) {
    const parts = line.split("│").slice(1, -1);
    const last = parts.at(-1)!.replace(/\s+/g, "");
    if (parts[0]!.trim() !== "") cells.push(last);
    else cells[cells.length - 1] += last;
  }
  return cells.slice(1); // the head
}

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), "ppc-"));
  runs = join(scratch, "runs");
  // run all says on stderr which probe it is at.
  const run = spawned(80, "run", "all", "--runs", runs, "--no-db");
  expect(run.status, run.stderr).toBe(0);
  runOutput = run.stdout;
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("at 80 columns", () => {
  it("run all prints every probe's title, table and hints within 80 columns", async () => {
    expect(over(runOutput, 80)).toEqual([]);
    for (const probe of PROBES) expect(runOutput).toContain(`${join(runs, probe)}`);
  });

  it("report keeps seq, tokens and the whole prefix of every request, and names what it left out", async () => {
    for (const probe of PROBES) {
      const table = await printed(80, "report", probe, "--runs", runs);
      expect(over(table, 80), probe).toEqual([]);
      expect(table, probe).not.toContain("…");
      const rows = await reportRows(probe);
      expect(prefixCells(table), probe).toEqual(rows.map((row) => row.prefixSummary.replace(/\s+/g, "")));
      for (const row of rows) expect(table).toMatch(new RegExp(`│ +${row.seq} │.* ${row.tokens!.total} tok `));
      expect(table, probe).toMatch(/^left out at this width: roles/m);
      expect(table, probe).toContain("--wide: every column");
    }
  });

  it("report p1 shows its prefix column in full on one line a row", async () => {
    const table = await printed(80, "report", "p1", "--runs", runs);
    expect(table).toMatch(/│ c1: new conversation +│\n/);
    expect(table).toMatch(/│ c1: kept \d+ B\/\d+ tok from #\d │\n/);
    expect(table.split("\n").filter((line) => /^│ +\d+ │/.test(line))).toHaveLength(4);
  });

  it("report --segments, and show of each probe's first and last request, fit", async () => {
    for (const probe of PROBES) {
      expect(over(await printed(80, "report", probe, "--segments", "--runs", runs), 80), probe).toEqual([]);
      const seqs = (await reportRows(probe)).map((row) => row.seq);
      for (const seq of new Set([seqs[0]!, seqs.at(-1)!])) {
        const shown = await printed(80, "show", probe, String(seq), "--runs", runs);
        expect(over(shown, 80), `${probe} ${seq}`).toEqual([]);
        expect(shown).toContain(`request ${seq}`);
      }
    }
  });

  it("diff fits every line, breaking between phrases so no figure is cut", async () => {
    for (const [a, b] of PAIRS) {
      const text = await printed(80, "diff", a!, b!, "--runs", runs);
      expect(over(text, 80), `${a} ${b}`).toEqual([]);
      // Every figure of the unbroken output is there whole (a pipe without COLUMNS prints lines whole).
      const whole = (await cli(0, "diff", a!, b!, "--wide", "--runs", runs)).stdout;
      const figures = (s: string) => s.match(/\d+→\d+ \([-+]?\d+\)/g) ?? [];
      expect(figures(text)).toEqual(figures(whole));
    }
  });

  it("check prints its table, regressions and savings within 80 columns", async () => {
    // Its own workspace puts other paths in the prompts than the baselines hold: regressions, exit 1.
    // --verbose: every finding under each probe's "what changed" line.
    const { status, stdout } = await cli(80, "check", "p1", "p5", "--verbose", "--runs", join(scratch, "check-runs"));
    expect(status).toBe(1);
    expect(stdout).toMatch(/^p1: /m);
    expect(stdout).toContain("regression: ");
    expect(over(stdout, 80)).toEqual([]);
  });

  it("profile import's summary fits, its long lines carried on under their indent", async () => {
    const summary = await printed(
      80,
      "profile",
      "import",
      "p1",
      "p5",
      "--runs",
      runs,
      "--out",
      join(scratch, "p.json"),
    );
    expect(summary).toMatch(/^not recovered/m);
    expect(over(summary, 80)).toEqual([]);
  });

  it("every --help fits", async () => {
    const commands = [
      ["run"],
      ["skills", "list"],
      ["report"],
      ["show"],
      ["view"],
      ["diff"],
      ["check"],
      ["mock"],
      ["agents", "install"],
      ["profile", "import"],
      ["proxy"],
      ["record"],
      ["export", "otel"],
    ];
    // The overview is main.ts's own, so the built CLI prints it.
    const overview = (width: number) => {
      const { status, stdout, stderr } = spawned(width, "--help");
      expect({ status, stderr }).toEqual({ status: 0, stderr: "" });
      return stdout;
    };
    const helps: [string[], (width: number) => Promise<string> | string][] = [
      [[], overview],
      ...commands.map((command): [string[], (width: number) => Promise<string>] => [
        command,
        (width) => printed(width, ...command, "--help"),
      ]),
    ];
    for (const [command, help] of helps) {
      const text = await help(80);
      // Every help's first line names payload-probe (and the command); the overview's closing hint names
      // the command as it was started (issue 38, 717413f).
      const usage = `Usage: payload-probe ${command.length === 0 ? "<command>" : `${command.join(" ")} `}`;
      expect(text.slice(0, usage.length)).toBe(usage);
      expect(over(text, 80), command.join(" ")).toEqual([]);
      // Wider terminals keep the 80 columns help is written for.
      expect(over(await help(200), 80), command.join(" ")).toEqual([]);
    }
  });
});

describe("at 60 and 120 columns", () => {
  it("report and diff fit, the prefix still whole; at 120 report leaves out less", async () => {
    for (const width of [60, 120]) {
      const table = await printed(width, "report", "p6", "--runs", runs);
      expect(over(table, width)).toEqual([]);
      const rows = await reportRows("p6");
      expect(prefixCells(table)).toEqual(rows.map((row) => row.prefixSummary.replace(/\s+/g, "")));
      expect(over(await printed(width, "diff", "p5", "p5-none", "--runs", runs), width)).toEqual([]);
      expect(over(await printed(width, "show", "p6", "4", "--runs", runs), width)).toEqual([]);
      expect(over(await printed(width, "run", "--help"), Math.min(width, 80))).toEqual([]);
    }
    const at60 = await printed(60, "report", "p1", "--runs", runs);
    const at120 = await printed(120, "report", "p1", "--runs", runs);
    expect(at60).toMatch(/^left out at this width: roles, markers, kind/m);
    expect(at120).toMatch(/│ markers +│ prefix +│/);
    expect(at120).toMatch(/^prefix: .* left out at this width: roles$/m);
  });
});
