import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { agentSide, fidelityRow, writeFidelityTable } from "../../src/analysis/fidelity.js";
import { LineWriter } from "../../src/analysis/table/output.js";
import { sharedRecords } from "../fixtures/shared-runs.js";

/** Real records: p1 and seq-search on the runtime (the suite's shared runs). */
const records = sharedRecords;

/** A real LineWriter over a stream that keeps what it is given. */
function collect(): { text: () => string; out: LineWriter } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString("utf8"));
      done();
    },
  });
  return { text: () => chunks.join(""), out: new LineWriter(stream) };
}

describe("fidelity rows", () => {
  it("summarise a run: folded tool lists, markers per request, where sizes change", async () => {
    const side = agentSide(await records("seq-search"));
    expect(side.requests).toBe(6);
    expect(side.tools).toBe("[mcp] → [mcp, a_tool1]×3 → [mcp, a_tool1, b_tool2]×2");
    expect(side.toolsSize).toBe("changes at #2, #5");
    expect(side.systemSize).toBe("changes at #2, #5");
  });

  it("a run against itself matches; sizes alone never break a match but show as deltas", async () => {
    const p1 = await records("p1");
    expect(fidelityRow("p1", p1, p1).verdict).toBe("match");
    const longer = p1.map((r) => ({ ...r, toolsChars: r.toolsChars + 7, systemChars: r.systemChars - 3 }));
    const row = fidelityRow("p1", p1, longer);
    expect(row.verdict).toBe("match");
    expect(row.deltas).toEqual({ toolsChars: [7, 7, 7, 7], systemChars: [-3, -3, -3, -3] });
  });

  it("names each aspect that differs; a recorded divergence reads as a finding", async () => {
    const p1 = await records("p1");
    const other = p1.map((r, i) => ({
      ...r,
      tools: i === 2 ? ["read"] : r.tools,
      markers: { ...r.markers, result: 0 },
      toolsChars: i === 2 ? 10 : r.toolsChars,
    }));
    const row = fidelityRow("p1", p1, other);
    expect(row.differs).toEqual(["tools", "markers", "toolsSize"]);
    expect(row.verdict).toBe("differs");
    expect(fidelityRow("p1", p1, other, true).verdict).toBe("finding");
    expect(fidelityRow("p1", p1, p1.slice(0, 3)).deltas).toBeUndefined();
  });

  it("the table puts both sides in a cell only where they differ, and names a skipped probe's reason", async () => {
    const p1 = await records("p1");
    const { text: written, out } = collect();
    await writeFidelityTable(
      [
        fidelityRow("p1", p1, p1),
        fidelityRow("p2", p1, p1.slice(0, 2), true),
        fidelityRow("p7", p1, { skipped: "no way" }),
      ],
      out,
    );
    const text = written();
    expect(text).toContain("[read, mcp]×4");
    expect(text).toContain("runtime: [read, mcp]×4");
    expect(text).toContain("pi: [read, mcp]×2");
    expect(text).toContain("finding: requests, tools, roles, markers");
    expect(text).toContain("skipped on pi: no way");
  });

  it("at 80 columns keeps the probe and its whole verdict, and says which columns it left out", async () => {
    const p1 = await records("p1");
    const { text: written, out } = collect();
    await writeFidelityTable([fidelityRow("p1", p1, p1), fidelityRow("p2", p1, p1.slice(0, 2), true)], out, {
      maxWidth: 80,
      colour: false,
    });
    const text = written();
    expect(Math.max(...text.split("\n").map((line) => [...line].length))).toBeLessThanOrEqual(80);
    expect(text).toMatch(/^left out at this width: system size, tools size/);
    expect(text).not.toContain("…");
    // The verdict (the last column) wraps between words instead of being cut.
    const verdicts = text
      .split("\n")
      .filter((line) => line.startsWith("│"))
      .map((line) => line.split("│").at(-2)!.trim());
    expect(verdicts.join(" ")).toContain("finding: requests, tools, roles, markers");
  });
});
