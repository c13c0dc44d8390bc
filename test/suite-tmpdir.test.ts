/**
 * The suite's TMPDIR on a memory file system (test/fixtures/suite-tmpdir.ts), in a real tmpfs: a
 * folder of this test's own below /dev/shm stands for the root, so nothing of another suite is touched.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../src/project-root.js";
import { MEMORY_ROOT, OWNER_FILE as OWNER, onTmpfs, suiteTmpdir } from "./fixtures/suite-tmpdir.js";

/** A pid no process has any more: a child that has exited. */
function goneProcessPid(): number {
  const child = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
  return Number(child.stdout);
}

describe.skipIf(!onTmpfs(MEMORY_ROOT))("the suite's temporary folder", () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(MEMORY_ROOT, "pp-tmpdir-test-"));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it("is made on the tmpfs with a name as short as /tmp's, naming this process, and removed whole", () => {
    const tmp = suiteTmpdir({}, root)!;
    expect(tmp.dir).toMatch(new RegExp(`^${root}/pp-[A-Za-z0-9]{6}$`));
    expect(readFileSync(join(tmp.dir, OWNER), "utf8")).toBe(String(process.pid));
    mkdirSync(join(tmp.dir, "run"));
    writeFileSync(join(tmp.dir, "run", "requests.jsonl"), "{}\n");
    tmp.remove();
    expect(existsSync(tmp.dir)).toBe(false);
    expect(existsSync(root)).toBe(true);
  });

  it("keeps a TMPDIR the caller chose, and makes nothing where there is no tmpfs with room", () => {
    expect(suiteTmpdir({ TMPDIR: "/var/tmp" }, root)).toBeUndefined();
    expect(suiteTmpdir({}, root, Number.MAX_SAFE_INTEGER)).toBeUndefined();
    expect(suiteTmpdir({}, join(root, "missing"))).toBeUndefined();
    expect(readdirSync(root)).toEqual([]);
  });

  it.skipIf(onTmpfs(PROJECT_ROOT))("makes nothing on a disk's file system (the checkout's)", () => {
    mkdirSync(join(PROJECT_ROOT, ".vitest-tmp"), { recursive: true });
    const onDisk = mkdtempSync(join(PROJECT_ROOT, ".vitest-tmp", "disk-"));
    try {
      expect(suiteTmpdir({}, onDisk, 0)).toBeUndefined();
      expect(readdirSync(onDisk)).toEqual([]);
    } finally {
      rmSync(onDisk, { recursive: true, force: true });
    }
  });

  it("removes a folder whose suite is gone, and keeps a living suite's and anything not a suite's", () => {
    const owned = (name: string, pid: number | undefined) => {
      mkdirSync(join(root, name, "inside"), { recursive: true });
      if (pid !== undefined) writeFileSync(join(root, name, OWNER), String(pid));
      return join(root, name);
    };
    const gone = goneProcessPid();
    const folders = [
      owned("pp-AbC123", gone),
      owned("pp-XyZ789", process.pid),
      owned("pp-NoPid1", undefined),
      owned("pp-other-name", gone),
    ];
    const tmp = suiteTmpdir({}, root)!;
    expect(folders.map((dir) => existsSync(dir))).toEqual([false, true, true, true]);
    tmp.remove();
  });
});
