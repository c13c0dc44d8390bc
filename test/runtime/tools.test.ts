import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createBuiltinTools } from "../../src/runtime/tools/builtin.js";
import type { RuntimeTool } from "../../src/runtime/types.js";
import { profile, removeTempDirs, scriptedAgent, tempDir } from "./harness.js";

const builtins = createBuiltinTools(profile);
const tool = (name: string): RuntimeTool => builtins.find((t) => t.name === name)!;

let cwd: string;
beforeEach(() => {
  cwd = tempDir("tools-test-");
});
afterEach(removeTempDirs);

const run = async (name: string, args: Record<string, unknown>) =>
  (await tool(name).execute(args, { cwd, env: process.env })).content;
/** Whether a process still runs; a killed child whose parent died may linger as an unreaped zombie. */
function isRunning(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]![0] !== "Z";
  } catch {
    return false;
  }
}
const numbered = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => `line ${from + i}`).join("\n");

describe("read (pi-runtime.md §1.2, §2)", () => {
  beforeEach(() => writeFileSync(join(cwd, "ten.txt"), numbered(1, 10)));

  it("returns the raw text of a whole file with no notice", async () => {
    expect(await run("read", { path: "ten.txt" })).toBe(numbered(1, 10));
    expect(await run("read", { path: join(cwd, "ten.txt") })).toBe(numbered(1, 10));
  });

  it("offset is 1-indexed and limit counts lines; more lines left gives the continue notice", async () => {
    expect(await run("read", { path: "ten.txt", offset: 3, limit: 4 })).toBe(
      `${numbered(3, 6)}\n\n[Showing lines 3-6 of 10. Use offset=7 to continue.]`,
    );
    expect(await run("read", { path: "ten.txt", offset: 7, limit: 4 })).toBe(numbered(7, 10));
  });

  it("cuts at 2000 lines", async () => {
    writeFileSync(join(cwd, "long.txt"), numbered(1, 2500));
    expect(await run("read", { path: "long.txt" })).toBe(
      `${numbered(1, 2000)}\n\n[Showing lines 1-2000 of 2500. Use offset=2001 to continue.]`,
    );
  });

  it("cuts at 50KB", async () => {
    const line = "x".repeat(1000);
    writeFileSync(join(cwd, "wide.txt"), Array(100).fill(line).join("\n"));
    // 51 lines of 1000 characters plus newlines fit in 51200 bytes; the 52nd does not.
    expect(await run("read", { path: "wide.txt" })).toBe(
      `${Array(51).fill(line).join("\n")}\n\n[Showing lines 1-51 of 100. Use offset=52 to continue.]`,
    );
  });

  it("a missing file or an offset past the end is an error", async () => {
    await expect(run("read", { path: "missing.txt" })).rejects.toThrow(/ENOENT/);
    await expect(run("read", { path: "ten.txt", offset: 11 })).rejects.toThrow(/beyond the end/);
  });
});

describe("write (pi-runtime.md §1.2, §2)", () => {
  it("creates missing parent folders and answers `Successfully wrote to <path>`", async () => {
    expect(await run("write", { path: "a/b/c.txt", content: "hello\n" })).toBe("Successfully wrote to a/b/c.txt");
    expect(readFileSync(join(cwd, "a/b/c.txt"), "utf8")).toBe("hello\n");
  });

  it("replaces what a file held", async () => {
    writeFileSync(join(cwd, "f.txt"), "old content");
    await run("write", { path: "f.txt", content: "new" });
    expect(readFileSync(join(cwd, "f.txt"), "utf8")).toBe("new");
  });
});

describe("edit (pi-runtime.md §1.2, §2)", () => {
  const original = "alpha\nbeta\ngamma\ndelta\n";
  beforeEach(() => writeFileSync(join(cwd, "f.txt"), original));
  const content = () => readFileSync(join(cwd, "f.txt"), "utf8");

  it("applies several edits, each matched against the original, and answers `Successfully replaced N block(s) in <path>.`", async () => {
    // The first edit writes "beta"; the second still finds the original "beta", not the new one.
    const result = await run("edit", {
      path: "f.txt",
      edits: [
        { oldText: "alpha", newText: "beta" },
        { oldText: "beta", newText: "BETA" },
        { oldText: "delta\n", newText: "" },
      ],
    });
    expect(result).toBe("Successfully replaced 3 block(s) in f.txt.");
    expect(content()).toBe("beta\nBETA\ngamma\n");
  });

  it("oldText that is not found fails and leaves the file alone", async () => {
    await expect(
      run("edit", {
        path: "f.txt",
        edits: [
          { oldText: "gamma", newText: "G" },
          { oldText: "omega", newText: "O" },
        ],
      }),
    ).rejects.toThrow("edits[1].oldText was not found in f.txt");
    expect(content()).toBe(original);
  });

  it("oldText that occurs more than once fails", async () => {
    await expect(run("edit", { path: "f.txt", edits: [{ oldText: "a\n", newText: "A\n" }] })).rejects.toThrow(
      /edits\[0\]\.oldText occurs more than once in f\.txt/,
    );
    expect(content()).toBe(original);
  });

  it("overlapping edits fail", async () => {
    await expect(
      run("edit", {
        path: "f.txt",
        edits: [
          { oldText: "beta\ngamma", newText: "x" },
          { oldText: "gamma\ndelta", newText: "y" },
        ],
      }),
    ).rejects.toThrow("edits[0] and edits[1] overlap in f.txt; merge them");
    expect(content()).toBe(original);
  });
});

describe("bash (pi-runtime.md §1.2, §2)", () => {
  it("runs in the working directory and returns stdout and stderr", async () => {
    expect(await run("bash", { command: "pwd" })).toBe(cwd);
    expect(await run("bash", { command: "echo out; sleep 0.1; echo err >&2" })).toBe("out\nerr");
  });

  it("empty output is `(no output)`", async () => {
    expect(await run("bash", { command: "true" })).toBe("(no output)");
  });

  it("a non-zero exit is an error result `<output>\\n\\nCommand exited with code N`", async () => {
    await expect(run("bash", { command: "echo partial; exit 3" })).rejects.toThrow(
      /^partial\n\nCommand exited with code 3$/,
    );
    await expect(run("bash", { command: "exit 1" })).rejects.toThrow(/^\(no output\)\n\nCommand exited with code 1$/);
  });

  it("a timeout stops the command and its children", async () => {
    // 3 s leaves a loaded machine time to start bash and write the pid; the background child would run 300 s.
    await expect(
      run("bash", { command: "echo begun; sleep 300 & echo $! > child.pid; sleep 300", timeout: 3 }),
    ).rejects.toThrow(/^begun\n\nCommand timed out after 3 seconds$/);
    const child = Number(readFileSync(join(cwd, "child.pid"), "utf8"));
    // The killed child was reparented away from this process, so no exit event reaches it: its end is
    // looked for until seen; one the tool left running would hold the test to its timeout.
    while (isRunning(child)) await new Promise((resolve) => setTimeout(resolve, 20));
  });
});

describe("grep, find, ls (pi-runtime.md §1.2)", () => {
  beforeEach(() => {
    mkdirSync(join(cwd, "sub"));
    mkdirSync(join(cwd, "ignored"));
    writeFileSync(join(cwd, ".gitignore"), "ignored/\n*.log\n");
    writeFileSync(join(cwd, "a.txt"), "needle one\nhay\nmore hay\n");
    writeFileSync(join(cwd, "sub", "b.txt"), "Needle two\n");
    writeFileSync(join(cwd, "sub", ".gitignore"), "secret.txt\n");
    writeFileSync(join(cwd, "sub", "secret.txt"), "needle hidden\n");
    writeFileSync(join(cwd, "ignored", "c.txt"), "needle three\n");
    writeFileSync(join(cwd, "x.log"), "needle log\n");
  });

  it("grep finds matches with path and line, honouring .gitignore files at every level", async () => {
    expect(await run("grep", { pattern: "needle" })).toBe("a.txt:1: needle one");
    expect(await run("grep", { pattern: "needle", ignoreCase: true })).toBe(
      "a.txt:1: needle one\nsub/b.txt:1: Needle two",
    );
  });

  it("grep context windows of nearby matches merge, each line shown once, and a final newline adds no line", async () => {
    expect(await run("grep", { pattern: "hay", context: 1, path: "a.txt" })).toBe(
      "a.txt-1- needle one\na.txt:2: hay\na.txt:3: more hay",
    );
    expect(await run("grep", { pattern: "one", context: 5, path: "a.txt" })).toBe(
      "a.txt:1: needle one\na.txt-2- hay\na.txt-3- more hay",
    );
  });

  it("grep literal, glob and limit", async () => {
    writeFileSync(join(cwd, "re.txt"), "a.b\naxb\n");
    expect(await run("grep", { pattern: "a.b", literal: true, glob: "*.txt" })).toBe("re.txt:1: a.b");
    expect(await run("grep", { pattern: "hay", limit: 1 })).toBe(
      "a.txt:2: hay\n\n[Stopped at 1 matches; narrow the search or raise limit.]",
    );
    expect(await run("grep", { pattern: "nothing-matches-this" })).toBe("No matches found");
  });

  it("find matches a glob against relative paths, honouring .gitignore", async () => {
    expect(await run("find", { pattern: "*.txt" })).toBe("a.txt\nsub/b.txt");
    expect(await run("find", { pattern: "sub/*" })).toBe("sub/.gitignore\nsub/b.txt");
    expect(await run("find", { pattern: "*.log" })).toBe("No files found");
  });

  it("ls lists every entry sorted, folders with a trailing /, dotfiles included", async () => {
    expect((await run("ls", {})).split("\n")).toEqual([".gitignore", "a.txt", "ignored/", "sub/", "x.log"]);
    expect(await run("ls", { path: "sub" })).toBe(".gitignore\nb.txt\nsecret.txt");
  });
});

describe("tool results in the loop (pi-runtime.md §2)", () => {
  it("a thrown error becomes the tool message's text, and a call to an inactive tool gives `Tool <name> not found`", async () => {
    const { agent, bodies } = await scriptedAgent(
      [
        {
          calls: [
            { call: "bash", args: { command: "echo x; exit 2" } },
            { call: "grep", args: { pattern: "x" } },
          ],
        },
        { text: "done" },
      ],
      { cwd },
    );
    await agent.prompt("go");
    const results = bodies[1]!.messages.filter((m) => m.role === "tool").map((m) => m.content);
    expect(results).toEqual(["x\n\nCommand exited with code 2", "Tool grep not found"]);
  });
});
