/**
 * `cache: valid` primed from the memo holds exactly what priming by a connection writes: p1 is run
 * by the built CLI, priming both ways, and the cache files are compared. A tampered memo shows up
 * in the cache file, which proves the memo run did not connect.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../../src/project-root.js";

const scratch = mkdtempSync(join(tmpdir(), "prime-memo-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const memoDir = join(scratch, "cache", "payload-probe", "mcp-primed");
/** The memo's entries, `<build>/<hash>.json`. */
const entries = () =>
  readdirSync(memoDir, { recursive: true, encoding: "utf8" }).filter((name) => name.endsWith(".json"));

/** Runs p1 from the checkout (its MCP config names the stub by a relative path) into `runs/<label>`. */
function runP1(label: string, extraEnv: Record<string, string> = {}): { code: number | null; dir: string } {
  const result = spawnSync(
    process.execPath,
    [join(PROJECT_ROOT, "dist/cli/main.js"), "run", "p1", "--no-db", "--runs", join(scratch, label)],
    {
      cwd: PROJECT_ROOT,
      env: {
        ...process.env,
        XDG_CACHE_HOME: join(scratch, "cache"),
        PAYLOAD_PROBE_WORKSPACE: join(scratch, "ws"),
        ...extraEnv,
      },
      encoding: "utf8",
      timeout: 120_000,
    },
  );
  return { code: result.status, dir: join(scratch, label, "p1") };
}

const read = (dir: string, file: string) => readFileSync(join(dir, file), "utf8");

/** Cache entries with the time of writing taken out. */
function withoutTimes(servers: [string, Record<string, unknown>][]): unknown {
  return servers.map(([name, entry]) => [name, { ...entry, cachedAt: 0 }]);
}

/** requests.jsonl without what differs between two runs of one probe: run id, times. */
function recordsWithoutTimes(dir: string): unknown[] {
  return read(dir, "requests.jsonl")
    .trim()
    .split("\n")
    .map((line) => ({ ...JSON.parse(line), run: "", ts: "", durationMs: 0 }));
}

describe("priming `cache: valid` from the memo", () => {
  it("stores what a connection writes, and a run primed from it sends the same requests", () => {
    const connected = runP1("connected");
    expect(connected.code).toBe(0);
    const [file] = entries();
    const memoPath = join(memoDir, file!);
    const memo = JSON.parse(readFileSync(memoPath, "utf8")) as { servers: [string, Record<string, unknown>][] };
    // p1's agent connects the server lazily, and that connection rewrites the cache entry: the same.
    const cacheAfterRun = JSON.parse(readFileSync(join(scratch, "ws", "p1", "agent", "mcp-cache.json"), "utf8"));
    expect(withoutTimes(memo.servers)).toEqual(withoutTimes(Object.entries(cacheAfterRun.servers)));

    const fromMemo = runP1("memo");
    const memoOff = runP1("memo-off", { PAYLOAD_PROBE_PRIME_MEMO: "off" });
    for (const run of [fromMemo, memoOff]) {
      expect(run.code).toBe(0);
      expect(read(run.dir, "payloads.jsonl")).toBe(read(connected.dir, "payloads.jsonl"));
      expect(recordsWithoutTimes(run.dir)).toEqual(recordsWithoutTimes(connected.dir));
    }
    expect(entries()).toEqual([file]);

    // A tampered memo reaches the model's search result, so the memo run did not connect to prime.
    writeFileSync(memoPath, JSON.stringify(memo).replace("Echo the given value back.", "Tampered description."));
    const tampered = runP1("tampered");
    expect(read(tampered.dir, "payloads.jsonl")).toContain("Tampered description.");
  });
});
