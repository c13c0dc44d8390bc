/**
 * Issue 8: a run is limited in requests and payload bytes, and one prompt in model requests; a probe
 * over a limit is bad input (exit 2, file and field named), refused before the request is sent.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { UserError } from "../../src/errors.js";
import { REQUESTS_PER_PROMPT } from "../../src/probes/limits.js";
import { loadProbeFile } from "../../src/probes/load.js";
import { runProbe } from "../../src/probes/runner.js";
import { PROJECT_ROOT } from "../../src/project-root.js";
import { cliIn } from "../cli/scratch-cli.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";

afterEach(removeTempDirs);

const readCall = `{call: read, args: {path: missing.txt}}`;

function writeProbe(dir: string, prompts: string[], steps: string[]): string {
  const path = join(dir, "limited.yaml");
  writeFileSync(
    path,
    `name: limited\nagent: {tools: read, noSkills: true}\nprompts: ${JSON.stringify(prompts)}\nmodel:\n  script: [${steps.join(", ")}]\n`,
  );
  return path;
}

async function runLimited(file: string, dir: string, limits: { requests: number; payloadBytes: number }) {
  return runProbe(await loadProbeFile(file, PROJECT_ROOT), {
    runsDir: join(dir, "runs"),
    workspaceRoot: join(dir, "ws"),
    limits,
  });
}

const refusal = (promise: Promise<unknown>) =>
  promise.then(
    () => {
      throw new Error("expected the run to be refused");
    },
    (error: unknown) => error as UserError,
  );

describe("run limits (issue 8)", () => {
  it(`more than ${REQUESTS_PER_PROMPT} model requests for one prompt exits 2 naming the step, with no stack`, () => {
    const dir = tempDir("limits-");
    const steps = [...Array(REQUESTS_PER_PROMPT).fill(readCall), "{text: done}"];
    const file = writeProbe(dir, ["go"], steps);
    const result = cliIn(dir, "run", file, "--runs", join(dir, "runs"));
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`${file}: field "model.script[${REQUESTS_PER_PROMPT}]"`);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it("a probe with more prompts than --max-requests exits 2 naming prompts", () => {
    const dir = tempDir("limits-");
    const file = writeProbe(dir, ["a", "b", "c"], ["{text: one}", "{text: two}", "{text: three}"]);
    const result = cliIn(dir, "run", file, "--runs", join(dir, "runs"), "--max-requests", "2");
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`${file}: field "prompts": expected at most 2 prompts`);
    expect(cliIn(dir, "run", file, "--max-requests", "0").stderr).toContain("--max-requests expected a whole number");
  });

  it("the request over --max-requests is refused before it is sent; the run is recorded as an error", async () => {
    const dir = tempDir("limits-");
    const file = writeProbe(dir, ["go"], [readCall, readCall, "{text: done}"]);
    const error = await refusal(runLimited(file, dir, { requests: 2, payloadBytes: 1e9 }));
    expect(error).toBeInstanceOf(UserError);
    expect(error.message).toContain(`${file}: field "model.script": expected a run of at most 2 requests`);
    expect(
      readFileSync(join(dir, "runs", "limited", "requests.jsonl"), "utf8")
        .trim()
        .split("\n"),
    ).toHaveLength(2);
    const db = new Database(join(dir, "runs", "payload-probe.db"), { readonly: true });
    expect(db.prepare("SELECT status, request_count FROM runs").get()).toEqual({ status: "error", request_count: 2 });
    db.close();
  });

  it("the request that would pass --max-payload-bytes is refused before it is captured", async () => {
    const dir = tempDir("limits-");
    const file = writeProbe(dir, ["go"], ["{text: done}"]);
    const error = await refusal(runLimited(file, dir, { requests: 10, payloadBytes: 100 }));
    expect(error.message).toMatch(/field "model.script": expected a run of at most 100 payload bytes/);
    expect(readFileSync(join(dir, "runs", "limited", "requests.jsonl"), "utf8")).toBe("");
  });
});
