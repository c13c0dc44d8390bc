/**
 * Runs kept and listed: three runs of one name stay readable (the folder the latest, the database the
 * older ones as name@N), `runs` lists them newest first at 80 columns, and the reader commands take
 * every form of run, the latest when none is named.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RequestRecord } from "../../src/capture/types.js";
import { PROJECT_ROOT } from "../../src/project-root.js";
import { runInProcess } from "../fixtures/cli-in-process.js";

/** The built CLI (the first run, as a user makes it). */
function spawned(args: string[], env: Record<string, string> = {}) {
  const child = spawnSync(process.execPath, [join(PROJECT_ROOT, "dist/cli/main.js"), ...args], {
    cwd: PROJECT_ROOT,
    encoding: "utf8",
    timeout: 120_000,
    env: { ...process.env, COLUMNS: "80", ...env },
  });
  return { code: child.status, out: child.stdout, err: child.stderr };
}

/** A command in this process (test/fixtures/cli-in-process.ts): what it prints and keeps is tested, not its start. */
async function cli(args: string[], env: Record<string, string> = {}) {
  const { status, stdout, stderr } = await runInProcess({ COLUMNS: "80", ...env }, ...args);
  return { code: status, out: stdout, err: stderr };
}

let base: string;
let runs: string;
const runIds: string[] = [];
const firstRecord = (dir: string) =>
  JSON.parse(readFileSync(join(dir, "requests.jsonl"), "utf8").split("\n")[0]!) as RequestRecord;

beforeAll(async () => {
  base = mkdtempSync(join(tmpdir(), "pp-runs-"));
  runs = join(base, "runs");
  for (let i = 0; i < 3; i++) {
    const args = ["run", "p3", "--runs", runs];
    const env = { PAYLOAD_PROBE_WORKSPACE: join(base, "ws") };
    const result = i === 0 ? spawned(args, env) : await cli(args, env);
    expect(result.code, result.err).toBe(0);
    runIds.unshift(firstRecord(join(runs, "p3")).run);
  }
});
afterAll(() => rmSync(base, { recursive: true, force: true }));

describe("runs", () => {
  it("lists every run newest first under the name a command takes, each line within 80 columns", async () => {
    const { code, out } = await cli(["runs", "--runs", runs]);
    expect(code).toBe(0);
    for (const line of out.split("\n")) expect(line.length).toBeLessThanOrEqual(80);
    const names = out
      .split("\n")
      .filter((line) => line.startsWith("│ p3"))
      .map((line) => line.split("│")[1]!.trim());
    expect(names).toEqual(["p3", "p3@2", "p3@3"]);
    expect(out).toContain("conv: conversations");
  });

  it("says the same as JSON: requests, tokens, cost, hit rate and failures of each run", async () => {
    const { code, out } = await cli(["runs", "--json", "--runs", runs]);
    expect(code).toBe(0);
    const rows = JSON.parse(out) as {
      name: string;
      requests: number;
      tokens: number;
      failures: number;
      what: string;
    }[];
    expect(rows.map((r) => [r.name, r.what, r.failures])).toEqual([
      ["p3", "probe", 0],
      ["p3@2", "probe", 0],
      ["p3@3", "probe", 0],
    ]);
    const records = readFileSync(join(runs, "p3", "requests.jsonl"), "utf8")
      .split("\n")
      .filter(Boolean);
    expect(rows[0]!.requests).toBe(records.length);
    const tokens = records.map((line) => (JSON.parse(line) as RequestRecord).tokens!.total);
    expect(rows[0]!.tokens).toBe(tokens.reduce((a, b) => a + b, 0));
  });

  it("takes every form of run: show p3@2 1 reads the older run from the database, show <seq> the latest", async () => {
    // Wide enough that show's first line is one line whatever the temporary folder's length.
    const wide = { COLUMNS: "200" };
    const older = await cli(["show", "p3@2", "1", "--runs", runs], wide);
    expect(older.code, older.err).toBe(0);
    expect(older.out.split("\n")[0]).toContain(`${runIds[1]} · request 1`);
    const latest = await cli(["show", "2", "--runs", runs], wide);
    expect(latest.code, latest.err).toBe(0);
    expect(latest.out.split("\n")[0]).toBe(`${join(runs, "p3")} · request 2 · loop · openai-completions qwen3.8-flash`);
    const folder = await cli(["show", join(runs, "p3"), "1", "--runs", runs]);
    expect(folder.code).toBe(0);
  });

  it("a bare report and view take the latest run; view of an older run writes beside its name's folder", async () => {
    const report = await cli(["report", "--runs", runs]);
    expect(report.code, report.err).toBe(0);
    expect(report.out).toContain("│   1 │ loop");
    const view = await cli(["view", "--runs", runs]);
    expect(view.code, view.err).toBe(0);
    expect(view.out).toContain(join(runs, "p3", "view.html"));
    const older = await cli(["view", "p3@3", "--runs", runs]);
    expect(older.code, older.err).toBe(0);
    expect(existsSync(join(runs, "p3", `view-${runIds[2]}.html`))).toBe(true);
  });

  it("counts conversations when the records carry them", async () => {
    const { code } = await cli(["run", "p3", "--runs", base, "--no-db"], { PAYLOAD_PROBE_WORKSPACE: join(base, "ws") });
    expect(code).toBe(0);
    const lines = readFileSync(join(base, "p3", "requests.jsonl"), "utf8")
      .split("\n")
      .filter(Boolean);
    const tagged = lines.map((line, i) => {
      const record = JSON.parse(line) as RequestRecord;
      record.conversation =
        i === 1 ? { id: "c2", role: "side", parent: "c1", by: "content" } : { id: "c1", role: "main", by: "content" };
      return JSON.stringify(record);
    });
    writeFileSync(join(base, "p3", "requests.jsonl"), `${tagged.join("\n")}\n`);
    unlinkSync(join(base, "p3", "requests.index.jsonl"));
    const { out } = await cli(["runs", "--json", "--runs", base]);
    const rows = JSON.parse(out) as { name: string; conversations: number | null }[];
    expect(rows.find((r) => r.name === "p3")?.conversations).toBe(2);
  });

  it("keeps a previous run no database holds as <name>.previous-1 instead of replacing it", async () => {
    const other = join(base, "nodb");
    const env = { PAYLOAD_PROBE_WORKSPACE: join(base, "ws") };
    expect((await cli(["run", "p3", "--runs", other, "--no-db"], env)).code).toBe(0);
    const first = firstRecord(join(other, "p3")).run;
    const second = await cli(["run", "p3", "--runs", other, "--no-db"], env);
    expect(second.code).toBe(0);
    expect(second.err).toContain(`kept as ${join(other, "p3.previous-1")}`);
    expect(firstRecord(join(other, "p3.previous-1")).run).toBe(first);
    const listed = JSON.parse((await cli(["runs", "--json", "--runs", other])).out) as { name: string }[];
    expect(listed.map((r) => r.name).sort()).toEqual(["p3", "p3.previous-1"]);
  });
});
