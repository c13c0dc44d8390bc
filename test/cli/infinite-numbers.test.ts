/**
 * Issue 35: a record whose `tokens.total` is a 401-digit integer (JSON.parse reads it as Infinity)
 * made report and export otel exit 3 with a stack from the pricing library. Bad input exits 2
 * naming the file, the line and the field.
 */
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closedPort } from "../fixtures/closed-port.js";
import { sharedRun } from "../fixtures/shared-runs.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";
import { cliIn } from "./scratch-cli.js";

let scratch: string;
let runs: string;
let requests: string;

beforeAll(async () => {
  scratch = tempDir("infinite-numbers-");
  runs = join(scratch, "runs");
  const dir = join(runs, "huge-total");
  cpSync((await sharedRun("p1")).dir, dir, { recursive: true });
  requests = join(dir, "requests.jsonl");
  const lines = readFileSync(requests, "utf8").split("\n");
  const record = JSON.parse(lines[1]!) as { tokens: { total: number } };
  expect(record.tokens.total).toBeGreaterThan(0);
  lines[1] = lines[1]!.replace(`"total":${record.tokens.total}`, `"total":1${"0".repeat(400)}`);
  writeFileSync(requests, lines.join("\n"));
});
afterAll(removeTempDirs);

describe("a record holding a number too large for a double", () => {
  it("report and export otel exit 2 naming file, line and field", async () => {
    const expected = `payload-probe: ${requests}: field "line 2 tokens.total": expected a finite number (one past ±1.8e308 reads as infinite)`;
    const down = `http://127.0.0.1:${await closedPort()}`;
    for (const args of [
      ["report", "huge-total"],
      ["export", "otel", "huge-total", "--endpoint", down],
    ]) {
      const result = cliIn(scratch, ...args, "--runs", runs);
      expect(result.stderr, args.join(" ")).not.toMatch(/internal error|\n\s+at /);
      expect(result.code, `${args.join(" ")}\n${result.stderr}`).toBe(2);
      expect(result.stderr.trim()).toBe(expected);
    }
  });
});
