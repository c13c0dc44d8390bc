/**
 * Issue 21, "database locked, corrupt, full, read-only": `run`, `proxy` and `report` on a runs folder
 * whose database or disk cannot be used end with one line and exit 2, and `runs/p1` still holds the
 * previous capture byte for byte. Real SQLite files and folders; a full disk is a small tmpfs and a
 * read-only one a read-only bind mount (both need root and mount), an immutable file `chattr +i`.
 * In each case `proxy` runs the built CLI as a child (the one line and exit code a process shows,
 * bounded by a time limit should it start serving after all); `run` and `report` run in this process
 * (test/fixtures/cli-in-process.ts), from the scratch folder as the child.
 */
import { spawnSync } from "node:child_process";
import {
  closeSync,
  cpSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { runInProcessAt } from "../fixtures/cli-in-process.js";
import { fileTempDir, removeFileTempDirs, removeTempDirs, tempDir } from "../runtime/harness.js";
import { MAIN, scratchEnv } from "./scratch-cli.js";

const PROBE = `name: p1
agent: { noSkills: true, noTools: true }
prompts: ["hello"]
model:
  script:
    - text: hi
`;

/** Undone after each test, whatever its outcome: mounts, immutable flags, open connections. */
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
  removeTempDirs();
});

/** Runs a command of the system (mount, chattr); whether it worked. */
const system = (command: string, ...args: string[]) => spawnSync(command, args, { stdio: "ignore" }).status === 0;

/** Whether this machine lets the test mount (root, in a namespace that allows it): tried once on a scratch folder. */
const canMount = (() => {
  const dir = tempDir("mount-probe-");
  const ok = system("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", dir);
  if (ok) system("umount", dir);
  return ok;
})();

const canChattr = (() => {
  const file = join(tempDir("chattr-probe-"), "f");
  writeFileSync(file, "");
  const ok = system("chattr", "+i", file);
  if (ok) system("chattr", "-i", file);
  return ok;
})();

/** A scratch folder in which the CLI made one run of p1 in `runs`: made once, copied for each test. */
let firstCapture: string | undefined;
afterAll(removeFileTempDirs);

async function madeOnce(): Promise<string> {
  if (firstCapture) return firstCapture;
  firstCapture = fileTempDir("pp-storage-first-");
  writeFileSync(join(firstCapture, "p1.yaml"), PROBE);
  const first = await inProcess(firstCapture, "run", "p1.yaml", "--runs", "runs");
  expect(first.code, first.stderr).toBe(0);
  return firstCapture;
}

/** A scratch folder with one finished run of p1 in `runs`, and the bytes of its folder to compare with later. */
async function previousCapture(runs?: (scratch: string) => void) {
  const scratch = tempDir("storage-failure-");
  runs?.(scratch);
  cpSync(await madeOnce(), scratch, { recursive: true });
  const folder = join(scratch, "runs", "p1");
  const snapshot = () =>
    Object.fromEntries(readdirSync(folder).map((name) => [name, readFileSync(join(folder, name)).toString("base64")]));
  return { scratch, db: join(scratch, "runs", "payload-probe.db"), before: snapshot(), snapshot };
}

/**
 * SQLite's wait for a write lock, set short (PAYLOAD_PROBE_DB_WAIT, 5 s by default): the locked
 * database's point is that the wait ends in one line, not how long it lasts.
 */
const DB_WAIT = { PAYLOAD_PROBE_DB_WAIT: "0.1" };

/**
 * A CLI command that must fail at once: `proxy` as a child, bounded, so a proxy that starts serving
 * after all fails the test instead of hanging; `run` and `report` in this process, where they end.
 */
async function failing(scratch: string, ...args: string[]) {
  if (args[0] !== "proxy") return inProcess(scratch, ...args);
  const result = spawnSync(process.execPath, [MAIN, ...args], {
    cwd: scratch,
    env: { ...scratchEnv(scratch), ...DB_WAIT },
    encoding: "utf8",
    timeout: 30_000,
  });
  return { code: result.status, stderr: result.stderr };
}

/** `payload-probe <args>` in this process, from the scratch folder with its workspace and temp folder. */
async function inProcess(scratch: string, ...args: string[]) {
  const env = { PAYLOAD_PROBE_WORKSPACE: join(scratch, "ws", "root"), TMPDIR: scratch, ...DB_WAIT };
  const { status, stderr } = await runInProcessAt(scratch, env, ...args);
  return { code: status, stderr };
}

/** Exit 2 with one line on stderr that names `file`, no stack trace. */
function expectOneLine(result: { code: number | null; stderr: string }, file: string) {
  expect(result.stderr.trim().split("\n"), result.stderr).toHaveLength(1);
  expect(result.stderr).toContain(file);
  expect(result.stderr).not.toMatch(/internal error|\n\s+at /);
  expect(result.code, result.stderr).toBe(2);
}

/** This process's open descriptors of `file` and of its -wal and -shm files (Linux /proc). */
function openDescriptorsOf(file: string): string[] {
  return readdirSync("/proc/self/fd").flatMap((fd) => {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      return target.startsWith(file) ? [target] : [];
    } catch {
      return [];
    }
  });
}

const RUN = ["run", "p1.yaml", "--runs", "runs"];
const PROXY = ["proxy", "--upstream", "http://127.0.0.1:9/v1", "--runs", "runs", "--name", "p1"];
const REPORT_LATEST = ["report", "p1@1", "--runs", "runs"];

describe("a database or disk that cannot be used (issue 21)", () => {
  it("locked by another writer: run and proxy give up after the busy wait in one line; report still reads", async () => {
    const { scratch, db, before, snapshot } = await previousCapture();
    const holder = new Database(db);
    cleanups.push(() => holder.close());
    holder.exec("BEGIN IMMEDIATE");
    for (const args of [RUN, PROXY]) {
      const result = await failing(scratch, ...args);
      expectOneLine(result, db);
      expect(result.stderr).toContain("kept it past the wait (PAYLOAD_PROBE_DB_WAIT seconds, 5 by default)");
      expect(snapshot()).toEqual(before);
    }
    const report = await failing(scratch, ...REPORT_LATEST);
    expect(report.code, report.stderr).toBe(0);
    expect(report.stderr).toBe("");
  });

  it("written by a newer payload-probe (a higher user_version): one line for run, proxy and report", async () => {
    const { scratch, db, before, snapshot } = await previousCapture();
    const raw = new Database(db);
    raw.pragma("user_version = 999");
    raw.close();
    for (const args of [RUN, PROXY, REPORT_LATEST]) {
      const result = await failing(scratch, ...args);
      expectOneLine(result, db);
      expect(result.stderr).toMatch(/written by a newer payload-probe \(format 999, this one reads up to \d+\)/);
      expect(snapshot()).toEqual(before);
    }
  });

  it("damaged: garbage over the file, or over its tables, is one line for run, proxy and report, and leaves no connection open", async () => {
    // Each from a capture of its own: garbage over the tables alone leaves the header a reader opens.
    for (const from of [0, 4096]) {
      const { scratch, db, before, snapshot } = await previousCapture();
      const size = statSync(db).size;
      const fd = openSync(db, "r+");
      writeSync(fd, Buffer.alloc(size - from, 0xa5), 0, size - from, from);
      // Closed: the commands run in this worker, which outlives the test.
      closeSync(fd);
      for (const args of [REPORT_LATEST, RUN, PROXY]) {
        expectOneLine(await failing(scratch, ...args), db);
        expect(snapshot()).toEqual(before);
        // run and report ran in this process: what failed on the file holds no descriptor of it.
        expect(openDescriptorsOf(db)).toEqual([]);
      }
    }
  });

  it.skipIf(!canMount)(
    "full (a 2 MiB tmpfs filled up; skipped where mount is refused): one line, the old run kept",
    {
      timeout: 60_000,
    },
    async () => {
      const { scratch, before, snapshot } = await previousCapture((scratch) => {
        const runs = join(scratch, "runs");
        spawnSync("mkdir", [runs]);
        expect(system("mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", runs)).toBe(true);
        cleanups.push(() => system("umount", "-l", runs));
      });
      const filler = openSync(join(scratch, "runs", "filler"), "w");
      const block = Buffer.alloc(64 * 1024, 1);
      try {
        for (;;) writeSync(filler, block);
      } catch (error) {
        expect((error as NodeJS.ErrnoException).code).toBe("ENOSPC");
      }
      for (const args of [RUN, PROXY]) {
        const result = await failing(scratch, ...args);
        expectOneLine(result, join(scratch, "runs"));
        expect(snapshot()).toEqual(before);
      }
    },
  );

  it.skipIf(!canMount)(
    "read-only filesystem (a read-only bind mount; skipped where mount is refused)",
    {
      timeout: 60_000,
    },
    async () => {
      const { scratch, db, snapshot } = await previousCapture();
      const runs = join(scratch, "runs");
      // run's closing cost line reads the run's row, which leaves SQLite's -shm and -wal beside the
      // database; a database that arrives without them (copied alone) is what SQLite cannot read here.
      for (const file of [`${db}-shm`, `${db}-wal`]) rmSync(file, { force: true });
      const before = snapshot();
      expect(system("mount", "--bind", runs, runs) && system("mount", "-o", "remount,bind,ro", runs)).toBe(true);
      cleanups.push(() => system("umount", "-l", runs));
      for (const args of [RUN, PROXY]) {
        // The first thing written there is the run folder's lock: the line names it.
        expectOneLine(await failing(scratch, ...args), join(runs, "p1.lock"));
        expect(snapshot()).toEqual(before);
      }
      // The folder reads without the database; p1@N needs it, and SQLite cannot open it here: said in one line.
      const folder = await failing(scratch, "report", "p1", "--runs", "runs");
      expect(folder.code, folder.stderr).toBe(0);
      const latest = await failing(scratch, ...REPORT_LATEST);
      expectOneLine(latest, db);
      expect(latest.stderr).toContain("-shm");
    },
  );

  it.skipIf(!canChattr)(
    "an immutable database file (chattr +i; skipped where chattr fails): run refused, report reads",
    {
      timeout: 60_000,
    },
    async () => {
      const { scratch, db, before, snapshot } = await previousCapture();
      expect(system("chattr", "+i", db)).toBe(true);
      cleanups.push(() => system("chattr", "-i", db));
      for (const args of [RUN, PROXY]) {
        expectOneLine(await failing(scratch, ...args), db);
        expect(snapshot()).toEqual(before);
      }
      const report = await failing(scratch, ...REPORT_LATEST);
      expect(report.code, report.stderr).toBe(0);
    },
  );
});
