/**
 * Issue 8, "names that become paths": every command that takes a name or writes a folder, fed `..`,
 * `.`, `a/b`, an absolute path or NUL, exits 2 and deletes nothing. Each case runs a command with a
 * scratch folder whose every file is a sentinel: after each command all of them are still there.
 * One refusal of each kind runs the built CLI as a child with cwd the scratch folder (the exit code
 * and one line a process shows); the rest run in this process (test/fixtures/cli-in-process.ts): names
 * that a command could take as paths from its cwd with the scratch folder as cwd there too, the others
 * with every path given absolute.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliInScratch, cliInScratchAt } from "../fixtures/cli-in-process.js";
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

type Command = (scratch: string, ...args: string[]) => Promise<{ code: number | null; stderr: string }>;

/** The built CLI as a child, cwd the scratch folder. */
const child: Command = async (folder, ...args) => cliIn(folder, ...args);
/** The command in this process, cwd the scratch folder as for `child`. */
const fromScratch: Command = (folder, ...args) => cliInScratchAt(folder, folder, ...args);

/** Runs the command in this process and holds it to exit 2 with a one-paragraph message and every sentinel intact. */
async function expectRefused(...args: string[]): Promise<string> {
  return expectRefusedBy(cliInScratch, ...args);
}

/** `expectRefused` with the command run by `how` (`child` for the built CLI in the scratch folder). */
async function expectRefusedBy(how: Command, ...args: string[]): Promise<string> {
  const before = filesUnder(scratch);
  const result = await how(scratch, ...args);
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

describe("names that become paths (issue 8)", async () => {
  it("run and mock refuse a probe file whose name is not one plain path segment, NUL included", async () => {
    for (const [i, name] of badNames().entries()) {
      const file = probeNamed(name, `bad-${i}.yaml`);
      const how = i === 0 ? child : cliInScratch;
      expect(await expectRefusedBy(how, "run", file, "--runs", runs)).toContain(`${file}: field "name"`);
      expect(await expectRefused("mock", file, "--runs", runs)).toContain(`${file}: field "name"`);
    }
  });

  it("run, mock and check refuse probe names that are not a plain name or an existing file", async () => {
    const names = badNames().filter((name) => !name.includes("\0")); // argv cannot carry NUL
    for (const [i, name] of names.entries()) {
      const how = i === 0 ? child : fromScratch;
      await expectRefusedBy(how, "run", name, "--runs", runs);
      await expectRefusedBy(how, "mock", name, "--runs", runs);
    }
    await expectRefusedBy(child, "check", ...names);
  });

  it("proxy refuses a --name that is not one plain path segment", async () => {
    for (const [i, name] of badNames()
      .filter((name) => !name.includes("\0"))
      .entries())
      expect(
        await expectRefusedBy(
          i === 0 ? child : cliInScratch,
          "proxy",
          "--upstream",
          "http://127.0.0.1:9",
          "--name",
          name,
          "--runs",
          runs,
        ),
      ).toContain("--name expected");
  });

  it("report and diff never look a run reference up outside the runs folder", async () => {
    for (const [i, ref] of ["..", ".", "a/b", join(scratch, "abs-victim"), "../victim@1"].entries()) {
      const how = i === 0 ? child : cliInScratch;
      await expectRefusedBy(how, "report", ref, "--runs", runs);
      await expectRefusedBy(how, "diff", ref, ref, "--runs", runs);
    }
  });

  it("a --runs that is a file is refused", async () => {
    expect(await expectRefused("run", probeNamed("ok", "ok.yaml"), "--runs", join(scratch, "keep.txt"))).toContain(
      "--runs expected a folder",
    );
  });

  it("a link as a run or workspace folder is refused in one line, exit 2, its target untouched (issue 21)", async () => {
    symlinkSync(join(scratch, "abs-victim"), join(scratch, "ws", "root", "linked"));
    expect(await expectRefusedBy(child, "run", probeNamed("linked", "linked.yaml"), "--runs", runs)).toContain(
      "but it is a link",
    );
    symlinkSync(join(scratch, "abs-victim"), join(runs, "linkrun"));
    expect(await expectRefused("run", probeNamed("linkrun", "linkrun.yaml"), "--runs", runs)).toContain(
      "but it is a link",
    );
    await expectRefused("proxy", "--upstream", "http://127.0.0.1:9", "--name", "linkrun", "--runs", runs);
  });

  it("a run folder holding a folder named like a run file is never replaced (issue 21)", async () => {
    plant("runs/inner/nested/requests.jsonl/keep.txt");
    expect(await expectRefused("run", probeNamed("nested", "nested.yaml"), "--runs", runs)).toContain(
      'holds "requests.jsonl" (a folder)',
    );
  });

  it("a workspace is replaced only when a run wrote everything in it, at every depth (issue 21)", async () => {
    // A user's folder under the workspace root, shaped like a workspace: never a run's.
    plant("ws/root/deep/cwd/src/precious.ts");
    expect(await expectRefused("run", probeNamed("deep", "deep.yaml"), "--runs", runs)).toContain('holds "cwd"');
    // A run's own workspace, with what its agent wrote in cwd through a tool: replaced by the next run.
    const probe = join(scratch, "probes", "writer.yaml");
    writeFileSync(
      probe,
      "name: writer\nprompts: [hi]\nagent:\n  tools: [write]\nmodel:\n  script:\n" +
        "    - {call: write, args: {path: notes/out.txt, content: mine}}\n    - {text: done}\n",
    );
    const written = join(scratch, "ws", "root", "writer", "cwd", "notes", "out.txt");
    for (let i = 0; i < 2; i++) {
      const result = await cliInScratch(scratch, "run", probe, "--runs", runs, "--no-db");
      expect(result.code, result.stderr).toBe(0);
      expect(readFileSync(written, "utf8")).toBe("mine");
    }
    // A file put under that workspace since (at any depth), or one of its files changed, is not the run's.
    plant("ws/root/writer/cwd/notes/precious.ts");
    expect(await expectRefused("run", probe, "--runs", runs)).toContain('holds "cwd/notes/precious.ts"');
    rmSync(join(scratch, "ws", "root", "writer", "cwd", "notes", "precious.ts"));
    writeFileSync(written, "edited by hand");
    expect(await expectRefused("run", probe, "--runs", runs)).toContain('holds "cwd/notes/out.txt"');
  });

  it("a folder the name matches but payload-probe did not make is never replaced", async () => {
    expect(await expectRefused("run", probeNamed("docs", "docs.yaml"), "--runs", runs)).toContain('holds "notes.txt"');
    expect(await expectRefused("run", probeNamed("mine", "mine.yaml"), "--runs", runs)).toContain('holds "notes.txt"');
    await expectRefused("proxy", "--upstream", "http://127.0.0.1:9", "--name", "docs", "--runs", runs);
  });
});
