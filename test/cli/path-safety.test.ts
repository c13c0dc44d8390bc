/**
 * Issue 8, "names that become paths": every command that takes a name or writes a folder, fed `..`,
 * `.`, `a/b`, an absolute path or NUL, exits 2 and deletes nothing. Each case runs the built CLI in a
 * scratch folder whose every file is a sentinel: after each command all of them are still there.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { removeTempDirs, tempDir } from "../runtime/harness.js";
import { cliIn } from "./scratch-cli.js";

let scratch: string;
let runs: string;

function filesUnder(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    files.set(relative(dir, path), readFileSync(path, "utf8"));
  }
  return files;
}

function plant(path: string): void {
  mkdirSync(join(scratch, path, ".."), { recursive: true });
  writeFileSync(join(scratch, path), `sentinel ${path}\n`);
}

/** A minimal probe file named `name` (JSON quoting is valid YAML and spells NUL as \u0000). */
function probeNamed(name: string, file: string): string {
  const path = join(scratch, "probes", file);
  mkdirSync(join(scratch, "probes"), { recursive: true });
  writeFileSync(path, `name: ${JSON.stringify(name)}\nprompts: ["hi"]\nmodel:\n  script: [{text: hi}]\n`);
  return path;
}

/** Runs the command and holds it to exit 2 with a one-paragraph message and every sentinel intact. */
function expectRefused(...args: string[]): string {
  const before = filesUnder(scratch);
  const result = cliIn(scratch, ...args);
  expect(result.stderr, args.join(" ")).not.toMatch(/internal error|\n\s+at /);
  expect(result.code, `${args.join(" ")}\n${result.stderr}`).toBe(2);
  const after = filesUnder(scratch);
  for (const [path, content] of before) expect(after.get(path), `${path} after ${args.join(" ")}`).toBe(content);
  return result.stderr;
}

beforeAll(() => {
  scratch = tempDir("path-safety-");
  runs = join(scratch, "runs", "inner");
  for (const path of [
    "keep.txt",
    "runs/keep.txt",
    "runs/inner/keep.txt",
    "runs/inner/payload-probe.db",
    "runs/victim/keep.txt",
    "runs/inner/a/keep.txt",
    "ws/keep.txt",
    "ws/root/keep.txt",
    "ws/victim/keep.txt",
    "ws/root/a/keep.txt",
    "abs-victim/keep.txt",
    "runs/inner/docs/notes.txt",
    "ws/root/mine/notes.txt",
  ])
    plant(path);
});
afterAll(removeTempDirs);

const badNames = () => ["..", ".", "../victim", "a/b", join(scratch, "abs-victim"), "nul\0name"];

describe("names that become paths (issue 8)", () => {
  it("run and mock refuse a probe file whose name is not one plain path segment, NUL included", () => {
    for (const [i, name] of badNames().entries()) {
      const file = probeNamed(name, `bad-${i}.yaml`);
      expect(expectRefused("run", file, "--runs", runs)).toContain(`${file}: field "name"`);
      expect(expectRefused("mock", file, "--runs", runs)).toContain(`${file}: field "name"`);
    }
  });

  it("run, mock and check refuse probe names that are not a plain name or an existing file", () => {
    const names = badNames().filter((name) => !name.includes("\0")); // argv cannot carry NUL
    for (const name of names) {
      expectRefused("run", name, "--runs", runs);
      expectRefused("mock", name, "--runs", runs);
    }
    expectRefused("check", ...names);
  });

  it("proxy refuses a --name that is not one plain path segment", () => {
    for (const name of badNames().filter((name) => !name.includes("\0")))
      expect(expectRefused("proxy", "--upstream", "http://127.0.0.1:9", "--name", name, "--runs", runs)).toContain(
        "--name expected",
      );
  });

  it("report and diff never look a run reference up outside the runs folder", () => {
    for (const ref of ["..", ".", "a/b", join(scratch, "abs-victim"), "../victim@1"]) {
      expectRefused("report", ref, "--runs", runs);
      expectRefused("diff", ref, ref, "--runs", runs);
    }
  });

  it("a --runs that is a file is refused", () => {
    expect(expectRefused("run", probeNamed("ok", "ok.yaml"), "--runs", join(scratch, "keep.txt"))).toContain(
      "--runs expected a folder",
    );
  });

  it("a link as a run or workspace folder is refused in one line, exit 2, its target untouched (issue 21)", () => {
    symlinkSync(join(scratch, "abs-victim"), join(scratch, "ws", "root", "linked"));
    expect(expectRefused("run", probeNamed("linked", "linked.yaml"), "--runs", runs)).toContain("but it is a link");
    symlinkSync(join(scratch, "abs-victim"), join(runs, "linkrun"));
    expect(expectRefused("run", probeNamed("linkrun", "linkrun.yaml"), "--runs", runs)).toContain("but it is a link");
    expectRefused("proxy", "--upstream", "http://127.0.0.1:9", "--name", "linkrun", "--runs", runs);
  });

  it("a run folder holding a folder named like a run file is never replaced (issue 21)", () => {
    plant("runs/inner/nested/requests.jsonl/keep.txt");
    expect(expectRefused("run", probeNamed("nested", "nested.yaml"), "--runs", runs)).toContain(
      'holds "requests.jsonl" (a folder)',
    );
  });

  it("a workspace is replaced only when a run wrote everything in it, at every depth (issue 21)", () => {
    // A user's folder under the workspace root, shaped like a workspace: never a run's.
    plant("ws/root/deep/cwd/src/precious.ts");
    expect(expectRefused("run", probeNamed("deep", "deep.yaml"), "--runs", runs)).toContain('holds "cwd"');
    // A run's own workspace, with what its agent wrote in cwd through a tool: replaced by the next run.
    const probe = join(scratch, "probes", "writer.yaml");
    writeFileSync(
      probe,
      "name: writer\nprompts: [hi]\nagent:\n  tools: [write]\nmodel:\n  script:\n" +
        "    - {call: write, args: {path: notes/out.txt, content: mine}}\n    - {text: done}\n",
    );
    const written = join(scratch, "ws", "root", "writer", "cwd", "notes", "out.txt");
    for (let i = 0; i < 2; i++) {
      const result = cliIn(scratch, "run", probe, "--runs", runs, "--no-db");
      expect(result.code, result.stderr).toBe(0);
      expect(readFileSync(written, "utf8")).toBe("mine");
    }
    // A file put under that workspace since (at any depth), or one of its files changed, is not the run's.
    plant("ws/root/writer/cwd/notes/precious.ts");
    expect(expectRefused("run", probe, "--runs", runs)).toContain('holds "cwd/notes/precious.ts"');
    rmSync(join(scratch, "ws", "root", "writer", "cwd", "notes", "precious.ts"));
    writeFileSync(written, "edited by hand");
    expect(expectRefused("run", probe, "--runs", runs)).toContain('holds "cwd/notes/out.txt"');
  });

  it("a folder the name matches but payload-probe did not make is never replaced", () => {
    expect(expectRefused("run", probeNamed("docs", "docs.yaml"), "--runs", runs)).toContain('holds "notes.txt"');
    expect(expectRefused("run", probeNamed("mine", "mine.yaml"), "--runs", runs)).toContain('holds "notes.txt"');
    expectRefused("proxy", "--upstream", "http://127.0.0.1:9", "--name", "docs", "--runs", runs);
  });
});
