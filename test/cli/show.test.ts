import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RequestRecord } from "../../src/capture/types.js";
import { runProbesInto } from "../analysis/view/view-runs.js";
import { cliInProcess } from "../fixtures/cli-in-process.js";

/** The command in this process (test/fixtures/cli-in-process.ts): what it prints is tested, not its start. */
const cli = (...args: string[]) => cliInProcess({}, ...args);

let base: string;
let runs: string;
const rows = (file: string) =>
  readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line));

beforeAll(async () => {
  ({ base, runs } = await runProbesInto(["seq-search"]));
});
afterAll(() => rmSync(base, { recursive: true, force: true }));

describe("payload-probe show <run> <seq>", () => {
  it("prints each tool definition, the system prompt and the messages, with the prefix break before the added tool", async () => {
    const { code, out } = await cli("show", "seq-search", "2", "--runs", runs);
    expect(code).toBe(0);
    const lines = out.split("\n");
    const added = lines.findIndex((l) => /^── tools\[1\] a_tool1 · \d+ tok · \d+ B$/.test(l));
    expect(added).toBeGreaterThan(0);
    expect(lines[added - 1]).toMatch(/^━━ cache prefix ends here .* breaks in tools: tools\[1\] added: a_tool1/);
    // A multi-line tool description reads as its lines, not as one string of \n escapes.
    expect(out).toContain("    Servers: a, b\n");
    expect(out).toContain("- a_tool1: Call server a tool1");
    expect(out).toMatch(/── messages\[1\] assistant · \d+ tok .*\nmcp \{"search":"tool1","server":"a"\}/);
    expect(out).toContain("  Shape:\n    { value: string; }");
  });

  it("segment tokens and bytes add up to the record's figures", async () => {
    const { code, out } = await cli("show", "seq-search", "5", "--json", "--runs", runs);
    expect(code).toBe(0);
    const shown = JSON.parse(out);
    const record = rows(join(runs, "seq-search", "requests.jsonl")).find((r: RequestRecord) => r.seq === 5);
    const sum = (part: string, key: "tokens" | "bytes") =>
      shown.segments.filter((s: { part: string }) => s.part === part).reduce((n: number, s: never) => n + s[key], 0);
    expect(sum("tools", "tokens") + sum("system", "tokens") + sum("messages", "tokens") + shown.overhead).toBe(
      record.tokens.total,
    );
    expect(sum("tools", "tokens")).toBe(record.tokens.tools);
    expect(sum("system", "bytes")).toBe(record.systemBytes);
    expect(
      shown.segments.filter((s: { part: string }) => s.part === "tools").map((s: { name: string }) => s.name),
    ).toEqual(record.tools);
    expect(shown.prefixEndsBefore).toBe("tools[2]");
  });

  it("lists the request's sources, largest first, adding up to its total; --json carries them", async () => {
    const record = rows(join(runs, "seq-search", "requests.jsonl")).find((r: RequestRecord) => r.seq === 5);
    const { code, out } = await cli("show", "seq-search", "5", "--runs", runs);
    expect(code).toBe(0);
    const lines = out.split("\n");
    const head = lines.findIndex((l) => l.startsWith("══ where the tokens come from"));
    expect(lines[head]).toBe(
      `══ where the tokens come from (${Object.keys(record.sources).length} sources · ${record.tokens.total} tok) ══`,
    );
    const listed = lines.slice(head + 1, lines.indexOf("", head)).map((l) => l.split(/\s+/));
    // The direct tools a_tool1 and b_tool2 under their servers, the gateway apart from both.
    expect(listed.map((l) => l[0]).sort()).toEqual(Object.keys(record.sources).sort());
    expect(listed.map((l) => l[0])).toEqual(expect.arrayContaining(["mcp:a", "mcp:b", "mcp-adapter"]));
    const tokens = listed.map((l) => Number(l[1]));
    expect(tokens).toEqual([...tokens].sort((a, b) => b - a));
    expect(tokens.reduce((a, b) => a + b, 0)).toBe(record.tokens.total);
    const shown = JSON.parse((await cli("show", "seq-search", "5", "--json", "--runs", runs)).out);
    expect(shown.sources).toEqual(record.sources);
  });

  it("an appended turn keeps the whole previous request: the line falls before the first new message", async () => {
    const { out } = await cli("show", "seq-search", "3", "--part", "messages", "--runs", runs);
    const lines = out.split("\n");
    const mark = lines.findIndex((l) => l.startsWith("━━ cache prefix ends here"));
    expect(lines[mark]).toContain("what follows was appended");
    expect(lines[mark + 1]).toMatch(/^── messages\[3\] assistant/);
    expect(out).not.toContain("══ tools");
  });

  it("--part body --json is the wire body decoded from payloads.jsonl", async () => {
    const { code, out } = await cli("show", "seq-search", "4", "--part", "body", "--json", "--runs", runs);
    expect(code).toBe(0);
    const payload = rows(join(runs, "seq-search", "payloads.jsonl")).find(
      (p: { type: string; seq: number }) => p.type === "request" && p.seq === 4,
    );
    expect(JSON.parse(out).body).toEqual(JSON.parse(payload.body));
  });

  it("a seq the run does not have exits 2 naming the run and the seq, without a stack", async () => {
    const { code, err } = await cli("show", "seq-search", "9", "--runs", runs);
    expect(code).toBe(2);
    expect(err).toMatch(/run .*seq-search has no request 9: its requests are 1–6/);
    expect(err).not.toMatch(/\n\s+at /);
    expect((await cli("show", "seq-search", "x", "--runs", runs)).code).toBe(2);
    const part = await cli("show", "seq-search", "1", "--part", "schemas", "--runs", runs);
    expect(part.code).toBe(2);
    expect(part.err).toContain("--part must be one of tools, system, messages, body");
  });
});
