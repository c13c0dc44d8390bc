/**
 * Every line the CLI prints fits the terminal (issue 22), checked on the built CLI against a run of
 * every shipped probe: report (table and --segments), show, diff of the probes made to be compared,
 * run, check and every --help, at COLUMNS=80, and report and diff at 60 and 120 too. What matters
 * most stays readable: the prefix column of report, where and why the cache prefix broke, is whole
 * in every row, and what a narrow table left out is named in its legend.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../../src/project-root.js";

// biome-ignore lint/suspicious/noControlCharactersInRegex: colour codes take no columns, so they are taken out.
const COLOUR_CODE = /\u001b\[[0-9;]*m/g;

/** Columns a line takes: what we print is one column per code point (no wide characters). */
const columns = (line: string) => [...line.replace(COLOUR_CODE, "")].length;

/** The lines of `text` wider than `width`, to name them when the assertion fails. */
const over = (text: string, width: number) => text.split("\n").filter((line) => columns(line) > width);

let scratch: string;
let runs: string;
let runOutput: string;

/** The built CLI with COLUMNS set (a test's stdout is a pipe, so COLUMNS is the width it fits to). */
function cli(width: number, ...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? "",
    COLUMNS: String(width),
    PAYLOAD_PROBE_WORKSPACE: join(scratch, "ws"),
    TMPDIR: scratch,
  };
  const child = spawnSync(process.execPath, [join(PROJECT_ROOT, "dist/cli/main.js"), ...args], {
    cwd: PROJECT_ROOT,
    encoding: "utf8",
    timeout: 300_000,
    env,
  });
  return { status: child.status, stdout: child.stdout, stderr: child.stderr };
}

/** stdout of a command that must succeed. */
function printed(width: number, ...args: string[]): string {
  const { status, stdout, stderr } = cli(width, ...args);
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
function reportRows(probe: string): Row[] {
  let rows = rowsRead.get(probe);
  if (!rows) {
    rows = JSON.parse(printed(80, "report", probe, "--json", "--runs", runs)) as Row[];
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
  const run = cli(80, "run", "all", "--runs", runs, "--no-db");
  expect(run.status, run.stderr).toBe(0);
  runOutput = run.stdout;
}, 600_000);
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("at 80 columns", () => {
  it("run all prints every probe's title, table and hints within 80 columns", () => {
    expect(over(runOutput, 80)).toEqual([]);
    for (const probe of PROBES) expect(runOutput).toContain(`${join(runs, probe)}`);
  });

  it("report keeps seq, tokens and the whole prefix of every request, and names what it left out", () => {
    for (const probe of PROBES) {
      const table = printed(80, "report", probe, "--runs", runs);
      expect(over(table, 80), probe).toEqual([]);
      expect(table, probe).not.toContain("…");
      const rows = reportRows(probe);
      expect(prefixCells(table), probe).toEqual(rows.map((row) => row.prefixSummary.replace(/\s+/g, "")));
      for (const row of rows) expect(table).toMatch(new RegExp(`│ +${row.seq} │.* ${row.tokens!.total} tok `));
      expect(table, probe).toMatch(/^left out at this width: roles/m);
      expect(table, probe).toContain("--wide: every column");
    }
  }, 300_000);

  it("report p1 shows its prefix column in full on one line a row", () => {
    const table = printed(80, "report", "p1", "--runs", runs);
    expect(table).toMatch(/│ c1: new conversation +│\n/);
    expect(table).toMatch(/│ c1: kept \d+ B\/\d+ tok from #\d │\n/);
    expect(table.split("\n").filter((line) => /^│ +\d+ │/.test(line))).toHaveLength(4);
  });

  it("report --segments, and show of each probe's first and last request, fit", () => {
    for (const probe of PROBES) {
      expect(over(printed(80, "report", probe, "--segments", "--runs", runs), 80), probe).toEqual([]);
      const seqs = reportRows(probe).map((row) => row.seq);
      for (const seq of new Set([seqs[0]!, seqs.at(-1)!])) {
        const shown = printed(80, "show", probe, String(seq), "--runs", runs);
        expect(over(shown, 80), `${probe} ${seq}`).toEqual([]);
        expect(shown).toContain(`request ${seq}`);
      }
    }
  }, 300_000);

  it("diff fits every line, breaking between phrases so no figure is cut", () => {
    for (const [a, b] of PAIRS) {
      const text = printed(80, "diff", a!, b!, "--runs", runs);
      expect(over(text, 80), `${a} ${b}`).toEqual([]);
      // Every figure of the unbroken output is there whole (a pipe without COLUMNS prints lines whole).
      const whole = cli(0, "diff", a!, b!, "--wide", "--runs", runs).stdout;
      const figures = (s: string) => s.match(/\d+→\d+ \([-+]?\d+\)/g) ?? [];
      expect(figures(text)).toEqual(figures(whole));
    }
  }, 300_000);

  it("check prints its table, regressions and savings within 80 columns", () => {
    // Its own workspace puts other paths in the prompts than the baselines hold: regressions, exit 1.
    // --verbose: every finding under each probe's "what changed" line.
    const { status, stdout } = cli(80, "check", "p1", "p5", "--verbose", "--runs", join(scratch, "check-runs"));
    expect(status).toBe(1);
    expect(stdout).toMatch(/^p1: /m);
    expect(stdout).toContain("regression: ");
    expect(over(stdout, 80)).toEqual([]);
  });

  it("profile import's summary fits, its long lines carried on under their indent", () => {
    const summary = printed(80, "profile", "import", "p1", "p5", "--runs", runs, "--out", join(scratch, "p.json"));
    expect(summary).toMatch(/^not recovered/m);
    expect(over(summary, 80)).toEqual([]);
  });

  it("every --help fits", () => {
    const commands = [
      [],
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
    for (const command of commands) {
      const help = printed(80, ...command, "--help");
      // Every help's first line names payload-probe (and the command); the overview's closing hint names
      // the command as it was started (issue 38, 717413f).
      const usage = `Usage: payload-probe ${command.length === 0 ? "<command>" : `${command.join(" ")} `}`;
      expect(help.slice(0, usage.length)).toBe(usage);
      expect(over(help, 80), command.join(" ")).toEqual([]);
      // Wider terminals keep the 80 columns help is written for.
      expect(over(printed(200, ...command, "--help"), 80), command.join(" ")).toEqual([]);
    }
  }, 300_000);
});

describe("at 60 and 120 columns", () => {
  it("report and diff fit, the prefix still whole; at 120 report leaves out less", () => {
    for (const width of [60, 120]) {
      const table = printed(width, "report", "p6", "--runs", runs);
      expect(over(table, width)).toEqual([]);
      const rows = reportRows("p6");
      expect(prefixCells(table)).toEqual(rows.map((row) => row.prefixSummary.replace(/\s+/g, "")));
      expect(over(printed(width, "diff", "p5", "p5-none", "--runs", runs), width)).toEqual([]);
      expect(over(printed(width, "show", "p6", "4", "--runs", runs), width)).toEqual([]);
      expect(over(printed(width, "run", "--help"), Math.min(width, 80))).toEqual([]);
    }
    const at60 = printed(60, "report", "p1", "--runs", runs);
    const at120 = printed(120, "report", "p1", "--runs", runs);
    expect(at60).toMatch(/^left out at this width: roles, markers, kind/m);
    expect(at120).toMatch(/│ markers +│ prefix +│/);
    expect(at120).toMatch(/^prefix: .* left out at this width: roles$/m);
  });
});
