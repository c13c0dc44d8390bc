import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { findProgram } from "../../src/cli/find-program.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";

afterEach(removeTempDirs);

describe("findProgram", () => {
  it("searches PATH in order for an executable file; a word with a slash names a file from cwd", () => {
    const root = tempDir("find-program-");
    const [a, b] = [join(root, "a"), join(root, "b")];
    mkdirSync(a);
    mkdirSync(b);
    writeFileSync(join(a, "tool"), "#!/bin/sh\n");
    chmodSync(join(a, "tool"), 0o644);
    writeFileSync(join(b, "tool"), "#!/bin/sh\n");
    chmodSync(join(b, "tool"), 0o755);
    mkdirSync(join(a, "dir-not-file"));
    const env = { PATH: `${a}:${b}` };
    expect(findProgram("tool", env)).toEqual({ found: join(b, "tool") });
    expect(findProgram("dir-not-file", env)).toEqual({ missing: true });
    expect(findProgram("absent", env)).toEqual({ missing: true });
    expect(findProgram("./a/tool", env, root)).toEqual({ notExecutable: join(a, "tool") });
    expect(findProgram("tool", { PATH: a })).toEqual({ notExecutable: join(a, "tool") });
    expect(findProgram("b/tool", {}, root)).toEqual({ found: join(b, "tool") });
  });
});
