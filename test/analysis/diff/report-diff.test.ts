import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DiffSummary, diffItems, diffRuns } from "../../../src/analysis/diff/diff.js";
import { type DiffFormat, writeDiff } from "../../../src/analysis/diff/diff-render.js";
import { resolveRun } from "../../../src/analysis/load-run.js";
import { type ReportFormat, writeLedger, writeReport } from "../../../src/analysis/report.js";
import { tokenLedger } from "../../../src/analysis/segments.js";
import { LineWriter } from "../../../src/analysis/table/output.js";
import { runHandProbe, twoTurnProbe } from "../hand-runs.js";

async function capture(write: (out: LineWriter) => Promise<unknown>): Promise<string> {
  const stream = new PassThrough();
  const chunks: string[] = [];
  stream.on("data", (c: Buffer) => chunks.push(c.toString()));
  await write(new LineWriter(stream));
  return chunks.join("");
}

let dir: string;
let runsDir: string;
const run = (name: string) => resolveRun(name, { runsDir });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "pp-analysis-"));
  runsDir = join(dir, "runs");
  await runHandProbe(dir, "one", twoTurnProbe("one", "read"));
  await runHandProbe(dir, "two", twoTurnProbe("two", "read,bash"));
  await runHandProbe(dir, "longer", twoTurnProbe("longer", "read", true));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("report", () => {
  const report = (format: ReportFormat, unit: "bytes" | "chars" = "bytes") =>
    capture((out) => writeReport(run("one").records(), out, { format, unit }));

  it("--plain prints the seed's one line per request", async () => {
    const lines = (await report("plain")).trim().split("\n");
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(
      /^seq=1 kind=loop toolCount=1 tools=\d+B system=\d+B .* roles=system>user done=0 conversation=c1 role=main$/,
    );
    expect(lines[2]).toMatch(
      /^seq=3 .* roles=system>user>assistant>tool>assistant>user done=1 conversation=c1 role=main$/,
    );
    expect(await report("plain", "chars")).toMatch(/^seq=1 kind=loop toolCount=1 tools=\d+ch system=\d+ch /);
  });

  it("--json gives one row per request with parts, tokens and the prefix", async () => {
    const rows = JSON.parse(await report("json"));
    expect(rows.map((r: { seq: number }) => r.seq)).toEqual([1, 2, 3]);
    expect(rows[0].prefixSummary).toBe("c1: new conversation");
    expect(rows[1].prefixSummary).toMatch(/^c1: kept \d+ B\/\d+ tok from #1$/);
    expect(rows[1].tokens.total).toBe(rows[1].tokens.tools + rows[1].tokens.system + rows[1].tokens.messages + 3);
  });

  it("--markdown is a table with a header and a row per request", async () => {
    const lines = (await report("markdown")).trim().split("\n");
    expect(lines[1]).toMatch(/^\|(---\|)+$/);
    expect(lines.slice(2)).toHaveLength(3);
  });

  it("--segments: the token ledger of each request adds up to its recorded total", async () => {
    const ledgers = JSON.parse(await capture((out) => writeLedger(tokenLedger(run("one").payloads()), out, "json")));
    const records = JSON.parse(await report("json"));
    for (const [i, ledger] of ledgers.entries()) {
      const sum = ledger.segments.reduce((s: number, x: { tokens: number }) => s + x.tokens, 0) + ledger.overhead;
      expect(sum).toBe(ledger.total);
      expect(ledger.total).toBe(records[i].tokens.total);
    }
    expect(ledgers[0].segments.map((s: { segment: string; name: string }) => `${s.segment} ${s.name}`)).toEqual([
      "tools[0] read",
      "system[0] ",
      "messages[0] user",
    ]);
  });
});

async function diff(a: string, b: string, format: DiffFormat): Promise<{ text: string; summary: DiffSummary }> {
  let summary: DiffSummary | undefined;
  const text = await capture(async (out) => {
    summary = await writeDiff(
      diffRuns(diffItems(run(a), true), diffItems(run(b), true), { a: run(a).count(), b: run(b).count() }),
      { a, b },
      out,
      format,
    );
  });
  return { text, summary: summary! };
}

describe("diff", () => {
  it("a run against itself: every request identical, no divergence", async () => {
    const { summary, text } = await diff("one", "one", "text");
    expect(summary.differing).toBe(0);
    expect(text).toContain("#1 (turn 1)  identical\n#2…#3 (2 requests)  identical\n");
  });

  it("a tool more in B: named at every request, tokens in tools only, both prefixes kept", async () => {
    const { summary } = await diff("one", "two", "text");
    const { text: json } = await diff("one", "two", "json");
    const parsed = JSON.parse(json);
    expect(parsed.requests).toHaveLength(3);
    for (const d of parsed.requests) {
      expect(d.toolsAdded).toEqual(["bash"]);
      expect(d.toolsRemoved).toEqual([]);
      expect(d.divergesIn).toBe("tools");
      expect(d.tokens.tools.b).toBeGreaterThan(d.tokens.tools.a);
      expect(d.tokens.messages.a).toBe(d.tokens.messages.b);
      expect(d.roles).toBeNull();
    }
    expect(summary.alignedBy).toBe("seq");
    expect(summary.firstDivergence).toEqual({ seqA: 1, seqB: 1, part: "tools" });
    expect(summary.a.breaks).toEqual([]);
    expect(summary.b.tokens).toBeGreaterThan(summary.a.tokens);
  });

  it("different request counts align by user turn: the extra request stands alone, turn 2 still pairs up", async () => {
    const { summary, text } = await diff("one", "longer", "json");
    const requests = JSON.parse(text).requests as { seqA: number | null; seqB: number | null; turn: number }[];
    expect(summary.alignedBy).toBe("turn");
    expect(requests.map((r) => [r.seqA, r.seqB, r.turn])).toEqual([
      [1, 1, 1],
      [2, 2, 1],
      [null, 3, 1],
      [3, 4, 2],
    ]);
    const md = (await diff("one", "longer", "markdown")).text.split("\n").filter((l) => l.startsWith("| #"));
    expect(md).toHaveLength(4);
  });

  it("two diffs read interleaved in one process: each gives what it gives alone", () => {
    const diffOf = (a: string, b: string) =>
      diffRuns(diffItems(run(a), true), diffItems(run(b), true), { a: run(a).count(), b: run(b).count() });
    const all = (a: string, b: string) => [...diffOf(a, b)];
    const pairs: [string, string][] = [
      ["one", "two"],
      ["two", "longer"],
    ];
    const alone = pairs.map(([a, b]) => all(a, b));
    const generators = pairs.map(([a, b]) => diffOf(a, b));
    const interleaved: unknown[][] = [[], []];
    for (let done = false; !done; ) {
      done = true;
      for (const [i, generator] of generators.entries()) {
        const step = generator.next();
        if (!step.done) interleaved[i]!.push(step.value);
        done &&= step.done === true;
      }
    }
    expect(interleaved).toEqual(alone);
    expect(alone[1]!.some((d) => d.toolsRemoved.includes("bash"))).toBe(true);
  });
});
