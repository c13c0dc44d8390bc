/**
 * `report --cost` and `diff --cost` at 80 columns (issue 38): no cell cut, every model named whole,
 * and every figure on screen agreeing with the others and saying whose it is. The runs are real
 * clients' bodies (test/fixtures/conversations: an SDK script's session and its title call) replayed
 * through a Capture into run folders, the title call sent to another model, the replies' usage the
 * provider's or a mock's estimate.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Capture } from "../../src/capture/capture.js";
import { PROJECT_ROOT } from "../../src/project-root.js";
import { codecFor } from "../../src/providers/codecs.js";
import type { WireApi } from "../../src/providers/types.js";
import { runInProcess } from "../fixtures/cli-in-process.js";
import { sharedRun } from "../fixtures/shared-runs.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";

const FIXTURE = join(PROJECT_ROOT, "test/fixtures/conversations/anthropic-sdk-1.16.0-side-call.jsonl");

/** The session into `dir`: request 2 (the title call) on `titleModel`; `estimated`: the usage is a mock's. */
async function session(dir: string, titleModel: string, estimated: boolean): Promise<void> {
  const capture = new Capture({ run: dir, probe: "cost", dir, db: null, markers: {}, codecFor });
  const rows = readFileSync(FIXTURE, "utf8").trim().split("\n");
  for (const [i, line] of rows.entries()) {
    const row = JSON.parse(line) as { api: WireApi; body: string; response: string };
    const body = JSON.parse(row.body) as { model: string };
    if (i === 1) body.model = titleModel;
    const request = {
      kind: "loop",
      api: row.api,
      url: "http://127.0.0.1:8787/v1",
      body: JSON.stringify(body),
    } as const;
    const outcome = { body: row.response, status: 200, firstByteMs: 0, ending: "complete" } as const;
    const ts = new Date(Date.parse("2026-12-04T10:00:00.000Z") + i * 1000).toISOString();
    await capture.recordExchange({ ...request }, { ...outcome, ...(estimated && { usageEstimated: true }) }, ts, 1);
  }
  capture.close();
}

let base: string;

/** The built CLI's stdout at COLUMNS=80 (a pipe: COLUMNS is the width it fits to); it must succeed. */
function spawnedAt80(...args: string[]): string {
  const child = spawnSync(process.execPath, [join(PROJECT_ROOT, "dist/cli/main.js"), ...args], {
    encoding: "utf8",
    timeout: 120_000,
    env: { ...process.env, COLUMNS: "80" },
  });
  expect({ status: child.status, stderr: child.stderr }).toEqual({ status: 0, stderr: "" });
  return child.stdout;
}

/** The same in this process (test/fixtures/cli-in-process.ts): the table is what is tested. */
async function at80(...args: string[]): Promise<string> {
  const { status, stdout, stderr } = await runInProcess({ COLUMNS: "80" }, ...args);
  expect({ status, stderr }).toEqual({ status: 0, stderr: "" });
  return stdout;
}

const tooWide = (text: string) => text.split("\n").filter((line) => [...line].length > 80);
/** Dollar figures in printed order: `$0.007471`, `-$0.0000336`. */
const dollarsIn = (text: string) => [...text.matchAll(/(-?)\$(\d+\.\d+)/g)].map((m) => Number(`${m[1]}${m[2]}`));
/** A table's cells, row by row, the lines a row was wrapped onto joined. */
function tableRows(text: string): string[][] {
  const rows: string[][] = [];
  for (const line of text.split("\n").filter((l) => l.startsWith("│"))) {
    const cells = line
      .split("│")
      .slice(1, -1)
      .map((c) => c.trim());
    if (cells[0] !== "") rows.push(cells);
    else rows[rows.length - 1] = rows.at(-1)!.map((c, i) => (cells[i] ? `${c} ${cells[i]}` : c));
  }
  return rows.slice(1);
}

beforeAll(async () => {
  base = tempDir("cost-columns-");
  await session(join(base, "two-models"), "gemini-2.5-flash", false);
  await session(join(base, "two-models-b"), "gemini-3-flash-preview", false);
  await session(join(base, "estimated"), "claude-haiku-4-5", true);
});
afterAll(removeTempDirs);

describe("report --cost at 80 columns", () => {
  it("names every model whole, cuts no cell, and its totals are the sums of its columns as printed", () => {
    const text = spawnedAt80("report", join(base, "two-models"), "--cost");
    expect(tooWide(text)).toEqual([]);
    expect(text).not.toContain("…");
    // The models are m1, m2 in the table, each named whole once above it.
    expect(text).toContain("m1: claude-sonnet-4-5, m2: gemini-2.5-flash");
    const rows = tableRows(text);
    expect(rows.map((r) => r[1])).toEqual(["m1", "m2", "m1"]);
    // The check says whose the reported split is, whole: the verdict, then reads and writes.
    for (const row of rows) expect(row.at(-1)).toMatch(/^(agrees|DISAGREE): read \d+, write \d+$/);
    const predicted = rows.map((r) => dollarsIn(r[5]!)[0]!);
    const reported = rows.map((r) => dollarsIn(r[6]!)[0]!);
    const total = text.slice(text.indexOf("total: "));
    const [shownPredicted, shownReported] = dollarsIn(total);
    const places = (n: number) => String(n).split(".")[1]?.length ?? 0;
    const sum = (figures: number[]) => figures.reduce((a, b) => a + b, 0);
    expect(shownPredicted).toBeCloseTo(sum(predicted), places(shownPredicted!) - 1);
    expect(shownReported).toBeCloseTo(sum(reported), places(shownReported!) - 1);
    // Both totals at one precision, and the reported one says it is the bill.
    expect(places(shownPredicted!)).toBe(places(shownReported!));
    expect(total.replace(/\s+/g, " ")).toContain("(the provider's usage: what it bills, trust it first)");
  });

  it("--wide puts the whole names in the model column", async () => {
    const rows = tableRows(await at80("report", join(base, "two-models"), "--cost", "--wide"));
    expect(rows.map((r) => r[1])).toEqual(["claude-sonnet-4-5", "gemini-2.5-flash", "claude-sonnet-4-5"]);
  });

  it("a mock's estimated usage is no check and no bill: the total says the prediction is the figure to read", async () => {
    const text = await at80("report", join(base, "estimated"), "--cost");
    expect(tooWide(text)).toEqual([]);
    expect(text).not.toContain("…");
    for (const row of tableRows(text)) expect(row.at(-1)).toMatch(/^estimated: read \d+, write \d+$/);
    expect(text.replace(/\s+/g, " ")).toContain(
      "(a mock's estimated usage, not a bill: the predicted figure is the one to read)",
    );
  });
});

describe("diff --cost at 80 columns", () => {
  it("names both models of each side whole, and each line's A, B and Δ add up as printed", async () => {
    const text = await at80("diff", join(base, "two-models"), join(base, "two-models-b"), "--cost");
    expect(tooWide(text)).toEqual([]);
    const cost = text.slice(text.indexOf("cost (predicted")).replace(/\n {4}/g, " ");
    expect(cost).toContain("A priced as claude-sonnet-4-5, gemini-2.5-flash;");
    expect(cost).toContain("B as claude-sonnet-4-5, gemini-3-flash-preview");
    const lines = cost.split("\n").filter((l) => /^ {2}(#\d+|total) +A /.test(l));
    expect(lines).toHaveLength(4);
    for (const line of lines) {
      const [a, b, delta] = dollarsIn(line);
      expect(b! - a!).toBeCloseTo(delta!, 12);
    }
    expect(cost).toContain("no prefix break on either side; each Δ above is A's and B's whole price apart");
  });

  it("a break's re-billing is told apart from the rows' Δ, and no line says there was no break", async () => {
    const [a, b] = [(await sharedRun("p0")).dir, (await sharedRun("p0-cold")).dir];
    const text = await at80("diff", a, b, "--cost");
    expect(tooWide(text)).toEqual([]);
    const cost = text.slice(text.indexOf("cost (predicted")).replace(/\n {4}/g, " ");
    expect(cost).toMatch(
      / {2}A #4 tools\[\d+\] added: \S+: this break re-billed [\d,]+ tokens × 1 request = \$0\.\d+\n/,
    );
    expect(cost).toContain("each Δ above is A's and B's whole price apart, not what a break re-billed");
    expect(cost).not.toContain("no prefix break");
  });
});
