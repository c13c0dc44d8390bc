import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../../src/project-root.js";
import { runHandProbe, twoTurnProbe } from "../analysis/hand-runs.js";
import { runInProcess } from "../fixtures/cli-in-process.js";

/** The built CLI as a user runs it: exit codes and what reaches stdout and stderr. */
function spawned(...args: string[]) {
  const child = spawnSync(process.execPath, [join(PROJECT_ROOT, "dist/cli/main.js"), ...args], {
    encoding: "utf8",
    timeout: 120_000,
  });
  return { code: child.status, out: child.stdout, err: child.stderr };
}

/**
 * The command in this process (test/fixtures/cli-in-process.ts), its errors made exit codes as main.ts
 * makes them; the corrupt line's exit 2 without a stack is the built CLI's.
 */
async function cli(...args: string[]) {
  const { status, stdout, stderr } = await runInProcess({}, ...args);
  return { code: status, out: stdout, err: stderr };
}

let dir: string;
let runs: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "pp-cli-"));
  runs = join(dir, "runs");
  await runHandProbe(dir, "one", twoTurnProbe("one", "read"));
  await runHandProbe(dir, "two", twoTurnProbe("two", "read,bash"));
  mkdirSync(join(dir, "corrupt"));
  const firstRecord = readFileSync(join(runs, "one", "requests.jsonl"), "utf8").split("\n")[0];
  writeFileSync(join(dir, "corrupt", "requests.jsonl"), `${firstRecord}\n{"v":1,"seq":\n`);
  // What a crash mid-write leaves: the last line of each file cut short, without its newline.
  cpSync(join(runs, "one"), join(dir, "torn"), { recursive: true });
  for (const file of ["requests.jsonl", "payloads.jsonl"]) {
    const text = readFileSync(join(dir, "torn", file), "utf8");
    writeFileSync(join(dir, "torn", file), text.slice(0, text.length - 40));
  }
  // The same run with blank lines between and after its records.
  cpSync(join(runs, "two"), join(dir, "blank"), { recursive: true });
  const records = readFileSync(join(runs, "two", "requests.jsonl"), "utf8");
  writeFileSync(join(dir, "blank", "requests.jsonl"), `\n${records.replaceAll("\n", "\n\n")}  \n\n`);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("payload-probe report / diff / check on the command line", () => {
  it("every command has --help and exits 0 with it", async () => {
    for (const command of ["report", "diff", "check"]) {
      const { code, out } = await cli(command, "--help");
      expect(code).toBe(0);
      expect(out).toMatch(new RegExp(`^Usage: payload-probe ${command} `));
      expect(out).toMatch(/Exit: 0 /);
    }
  });

  it("report --plain prints a line per request and exits 0", async () => {
    const { code, out } = await cli("report", "one", "--plain", "--runs", runs);
    expect(code).toBe(0);
    expect(out.trim().split("\n"), out).toHaveLength(3);
  });

  it("diff names the added tool and exits 0; --markdown gives a table row per request", async () => {
    const text = await cli("diff", "one", "two", "--runs", runs);
    expect(text.code).toBe(0);
    expect(text.out).toContain("(+bash)");
    const md = await cli("diff", "one", "two", "--markdown", "--runs", runs);
    expect(md.out.split("\n").filter((l) => l.startsWith("| #"))).toHaveLength(3);
  });

  it("a corrupt line exits 2 naming file and line, without a stack", async () => {
    const { code, err } = spawned("report", join(dir, "corrupt"), "--runs", runs);
    expect(code).toBe(2);
    expect(err).toContain(
      `${join(dir, "corrupt", "requests.jsonl")}: field "line 2": expected one JSON value per line`,
    );
    expect(err).not.toMatch(/\n\s+at /);
  });

  it("a torn last line is skipped and said on stderr; the whole lines are reported and exit 0", async () => {
    const plain = await cli("report", join(dir, "torn"), "--plain", "--runs", runs);
    expect(plain.code).toBe(0);
    expect(plain.out.trim().split("\n")).toEqual(
      (await cli("report", "one", "--plain", "--runs", runs)).out.trim().split("\n").slice(0, 2),
    );
    // The request whose record was torn off has its payload: report counts it apart, with the reason.
    expect(plain.err.split("\n")).toEqual([
      `${join(dir, "torn", "requests.jsonl")}: line 3 is cut off (the run stopped while writing it); read the lines before it`,
      expect.stringMatching(/payloads\.jsonl: line \d+ is cut off/),
      "1 request(s) have a payload but no row (their bodies are kept with the run's payloads):",
      "  #3 its record was never written (the run stopped before its response)",
      "",
    ]);
    const segments = await cli("report", join(dir, "torn"), "--segments", "--json", "--runs", runs);
    expect(segments.code).toBe(0);
    expect(segments.err).toContain(`${join(dir, "torn", "payloads.jsonl")}: line`);
    expect(segments.err).toContain("is cut off");
  });

  it("blank lines in requests.jsonl are no requests: diff still aligns by seq", async () => {
    const withBlanks = JSON.parse((await cli("diff", "one", join(dir, "blank"), "--json", "--runs", runs)).out);
    const clean = JSON.parse((await cli("diff", "one", "two", "--json", "--runs", runs)).out);
    expect(withBlanks.summary.alignedBy).toBe("seq");
    expect(withBlanks.requests).toEqual(clean.requests);
  });

  it("an unknown run, two output forms at once, or a missing argument exit 2", async () => {
    expect((await cli("report", "no-such-run", "--runs", runs)).code).toBe(2);
    expect((await cli("report", "one", "--json", "--markdown", "--runs", runs)).code).toBe(2);
    expect((await cli("diff", "one", "--runs", runs)).code).toBe(2);
  });
});
