import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DiffSummary, diffItems, diffRuns, type RequestDiff } from "../../../src/analysis/diff/diff.js";
import { writeDiff } from "../../../src/analysis/diff/diff-render.js";
import { resolveRun } from "../../../src/analysis/load-run.js";
import { LineWriter } from "../../../src/analysis/table/output.js";
import { copySharedRuns } from "../../fixtures/shared-runs.js";

/** The committed probes, run into a temp folder, diffed as experiments.md says they must read. */
let dir: string;
const lookup = () => ({ runsDir: join(dir, "runs") });

async function diff(a: string, b: string): Promise<{ requests: RequestDiff[]; summary: DiffSummary; text: string }> {
  const [ra, rb] = [resolveRun(a, lookup()), resolveRun(b, lookup())];
  const requests: RequestDiff[] = [];
  const gen = diffRuns(diffItems(ra, true), diffItems(rb, true), { a: ra.count(), b: rb.count() });
  let step = await gen.next();
  while (!step.done) {
    requests.push(step.value);
    step = await gen.next();
  }
  const stream = new PassThrough();
  const chunks: string[] = [];
  stream.on("data", (c: Buffer) => chunks.push(c.toString()));
  const [rc, rd] = [resolveRun(a, lookup()), resolveRun(b, lookup())];
  await writeDiff(
    diffRuns(diffItems(rc, true), diffItems(rd, true), { a: rc.count(), b: rd.count() }),
    { a, b },
    new LineWriter(stream),
    "text",
  );
  return { requests, summary: step.value, text: chunks.join("") };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "pp-experiments-"));
  await copySharedRuns(["seq-namespace", "seq-search", "p2-direct", "p2-proxy"], join(dir, "runs"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("diff seq-namespace seq-search", () => {
  it("same request count and roles, tools differing at every request", async () => {
    const { requests, summary } = await diff("seq-namespace", "seq-search");
    expect(summary.alignedBy).toBe("seq");
    expect(requests).toHaveLength(6);
    for (const d of requests) {
      expect(d.roles).toBeNull();
      expect(d.divergesIn).toBe("tools");
      expect(d.toolsA).toEqual(["mcp", "mcp__a", "mcp__b"]);
    }
    expect(requests.map((d) => d.toolsB!.join(","))).toEqual([
      "mcp",
      "mcp,a_tool1",
      "mcp,a_tool1",
      "mcp,a_tool1",
      "mcp,a_tool1,b_tool2",
      "mcp,a_tool1,b_tool2",
    ]);
  });

  it("seq-search breaks at requests 2 and 5 in tools, with the shared prefix before each; seq-namespace never breaks", async () => {
    const { summary, text } = await diff("seq-namespace", "seq-search");
    expect(summary.a.breaks).toEqual([]);
    expect(summary.b.breaks.map((b) => [b.seq, b.at, b.detail])).toEqual([
      [2, "tools", "tools[1] added: a_tool1"],
      [5, "tools", "tools[2] added: b_tool2"],
    ]);
    for (const b of summary.b.breaks) expect(b.sharedBytes).toBeGreaterThan(0);
    expect(text).toMatch(/B c1: breaks in tools \(vs #\d+\): tools\[1\] added: a_tool1 \(shared \d+ B\/\d+ tok\)/);
    expect(text).toMatch(/prefix breaks\s+│\s+0 │\s+2 │\s+\+2 │/);
    expect(text).toContain("prefix breaks A: none");
  });
});

describe("diff p2-direct p2-proxy", () => {
  it("shows the tool swap and the promptSnippet lines, and nothing else", async () => {
    const { requests, text } = await diff("p2-direct", "p2-proxy");
    expect(requests).toHaveLength(4);
    for (const d of requests) {
      expect(d.toolsAdded).toEqual(["mcp__probe_stub"]);
      expect(d.toolsRemoved).toEqual(["probe-stub_stub_echo", "probe-stub_stub_time"]);
      expect(d.toolsChanged).toEqual([]);
      expect(d.roles).toBeNull();
      expect(d.tokens.messages.a).toBe(d.tokens.messages.b);
      expect(d.systemLines!.removed).toEqual([
        "- probe-stub_stub_echo: Echo the given value back. Deterministic stub tool.",
        "- probe-stub_stub_time: Return a fixed stub timestamp.",
      ]);
      expect(d.systemLines!.added).toHaveLength(1);
      expect(d.systemLines!.added[0]).toMatch(/^- mcp__probe_stub: /);
    }
    expect(text).toContain('system + "- mcp__probe_stub: ');
  });
});
