/**
 * The composite GitHub Action (action.yml) as far as it runs offline: its shell steps, in order, with
 * GitHub's files (GITHUB_OUTPUT, GITHUB_STEP_SUMMARY, RUNNER_TEMP) in a temp folder and its
 * expressions filled in as the runner would. The cache step (`uses:`) and `npm ci` need GitHub and
 * the registry; the CLI is the checkout's built one.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { PROJECT_ROOT } from "../src/project-root.js";
import { MAIN } from "./cli/scratch-cli.js";
import { addTool, teamFolder } from "./fixtures/team-folder.js";
import { removeTempDirs, tempDir } from "./runtime/harness.js";

afterAll(removeTempDirs);

interface Step {
  id?: string;
  uses?: string;
  run?: string;
  shell?: string;
  env?: Record<string, string>;
  "working-directory"?: string;
}
interface Action {
  inputs: Record<string, { default: string }>;
  runs: { steps: Step[] };
}

const action = parse(readFileSync(join(PROJECT_ROOT, "action.yml"), "utf8")) as Action;

/** Runs the action's offline shell steps; the last step's exit code is the job's. */
function runAction(given: Record<string, string>, scratch: string) {
  const inputs = Object.fromEntries(
    Object.entries(action.inputs).map(([name, input]) => [name, given[name] ?? input.default]),
  );
  const temp = join(scratch, `runner-${Date.now()}`);
  mkdirSync(temp);
  const files = { GITHUB_OUTPUT: join(temp, "output"), GITHUB_STEP_SUMMARY: join(temp, "summary.md") };
  for (const file of Object.values(files)) writeFileSync(file, "");
  const outputs = () =>
    Object.fromEntries(
      readFileSync(files.GITHUB_OUTPUT, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]),
    );
  const fill = (text: string) =>
    text
      .replace(/\$\{\{ inputs\.([\w-]+) \}\}/g, (_, name: string) => inputs[name] ?? "")
      .replace(/\$\{\{ steps\.check\.outputs\.exit-code \}\}/g, () => outputs()["exit-code"] ?? "");
  let code: number | null = 0;
  for (const step of action.runs.steps) {
    if (step.uses || step.id === "install") continue;
    expect(step.shell).toBe("bash");
    const env = Object.fromEntries(Object.entries(step.env ?? {}).map(([k, v]) => [k, fill(v)]));
    const result = spawnSync("bash", ["-e", "-o", "pipefail", "-c", fill(step.run!)], {
      cwd: join(scratch, fill(step["working-directory"] ?? ".")),
      env: { ...process.env, ...env, ...files, RUNNER_TEMP: temp, PAYLOAD_PROBE_WORKSPACE: join(scratch, "ws") },
      encoding: "utf8",
      timeout: 120_000,
    });
    code = result.status;
    if (step.id !== undefined) expect(code, `${step.id}: ${result.stderr}`).toBe(0);
  }
  return { code, summary: readFileSync(files.GITHUB_STEP_SUMMARY, "utf8"), outputs: outputs() };
}

describe("action.yml's steps", () => {
  it("pass a team's probes with the figures against budget, and fail a pull request that adds a 2 KB tool with one line naming it", () => {
    const scratch = tempDir("action-");
    const team = teamFolder(scratch, "team");
    const cli = `node ${MAIN}`;
    const update = spawnSync(process.execPath, [MAIN, "check", "--update", "--budget-tokens", "100000"], {
      cwd: team,
      env: { ...process.env, PAYLOAD_PROBE_WORKSPACE: join(scratch, "ws") },
      encoding: "utf8",
    });
    expect(update.status, update.stderr).toBe(0);
    const passed = runAction({ "working-directory": "team", cli }, scratch);
    expect(passed.code).toBe(0);
    expect(passed.outputs["exit-code"]).toBe("0");
    expect(passed.summary).toMatch(/### Against budget\n\n- team-probe: [\d,]+ of 100,000 prompt tokens/);
    const passComment = readFileSync(passed.outputs["comment-body"]!, "utf8");
    expect(passComment.split("\n")[0]).toBe("**payload-probe: passed**");

    addTool(team, "export_everything", 2048);
    const failed = runAction({ "working-directory": "team", cli }, scratch);
    expect(failed.code).toBe(1);
    const comment = readFileSync(failed.outputs["comment-body"]!, "utf8");
    expect(comment.split("\n")[0]).toBe("**payload-probe: failed: a check did not hold**");
    expect(comment).toMatch(
      /\n- team-probe: tools \+1 \(tracker_export_everything\), system \+1 line, \+\d+ tokens per request, \+\$[\d.]+ per run\n/,
    );
    expect(failed.summary).toContain("### What changed");
  });
});
