/**
 * A session of `record`: a private folder in the system's temp folder (for the config files that point
 * an agent at the proxy), the mark every process the session starts carries, and the watch that ends
 * both when record is killed outright. The command itself runs through foreground-command.ts.
 */
import { spawn } from "node:child_process";
import { lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { isProcessAlive } from "./pid-lock.js";
import { processStart } from "./process-identity.js";

/**
 * The variable every process a session starts carries (the command and whatever it starts, a daemon
 * too): its value is the session's folder, so what the session started can be found and ended after
 * record is gone (Linux: /proc/<pid>/environ).
 */
export const SESSION_MARK = "PAYLOAD_PROBE_RECORD_SESSION";

/** The file in a session folder naming the record process that owns it: pid and start. */
const OWNER_FILE = "owner";

/** A private folder for one session (mode 0700, as mkdtemp makes it), and its removal. */
export interface SessionDir {
  path: string;
  /** Removes the folder with what is in it, if it is still the folder made here; else leaves it. */
  remove(): void;
}

/**
 * Makes a fresh folder under the system's temp folder, naming this process as its owner. It is
 * removed only while the same folder (device and inode, not a link) sits at its path: whatever was
 * put there in its place is not ours.
 */
export function makeSessionDir(prefix: string): SessionDir {
  const path = mkdtempSync(join(tmpdir(), prefix));
  writeFileSync(join(path, OWNER_FILE), `${process.pid} ${processStart(process.pid) ?? ""}\n`, { mode: 0o600 });
  const made = lstatSync(path);
  return {
    path,
    remove() {
      const now = lstatSync(path, { throwIfNoEntry: false });
      if (now?.isDirectory() && now.dev === made.dev && now.ino === made.ino)
        rmSync(path, { recursive: true, force: true });
    },
  };
}

/** The pids of this user's processes that carry the session's mark (none where there is no /proc). */
function markedProcesses(session: string): number[] {
  const mark = `${SESSION_MARK}=${session}`;
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return [];
  }
  const pids: number[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      // Another user's environ cannot be read: only our own processes are ever found.
      if (readFileSync(`/proc/${entry}/environ`, "latin1").split("\0").includes(mark)) pids.push(Number(entry));
    } catch {
      // Gone meanwhile, or not ours.
    }
  }
  return pids;
}

/** Ends what a session started and is still running (SIGTERM, as a terminal's hang-up would). */
export function endSessionProcesses(session: string): void {
  for (const pid of markedProcesses(session)) {
    try {
      process.kill(pid, "SIGTERM");
    } catch {
      // It ended meanwhile.
    }
  }
}

/** The owner a session folder names, or null when it names none (not a folder made by makeSessionDir). */
function ownerOf(path: string): { pid: number; started: string | null } | null {
  try {
    const [pid, started] = readFileSync(join(path, OWNER_FILE), "utf8").trim().split(" ");
    return Number.isInteger(Number(pid)) ? { pid: Number(pid), started: started || null } : null;
  } catch {
    return null;
  }
}

/**
 * Clears what sessions whose record process died (`kill -9`) left: their processes and folders
 * (a pi models.json holding the user's key). Only real folders (not links) directly in the system's
 * temp folder, with our prefix, owned by this user, naming an owner that no longer runs.
 */
export function clearDeadSessions(prefix: string): void {
  const temp = resolve(tmpdir());
  let names: string[];
  try {
    names = readdirSync(temp).filter((name) => name.startsWith(prefix));
  } catch {
    return;
  }
  for (const name of names) {
    const path = resolve(temp, name);
    const stat = lstatSync(path, { throwIfNoEntry: false });
    if (dirname(path) !== temp || !stat?.isDirectory() || stat.uid !== process.getuid?.()) continue;
    const owner = ownerOf(path);
    if (!owner || isProcessAlive(owner.pid, owner.started)) continue;
    endSessionProcesses(path);
    rmSync(path, { recursive: true, force: true });
  }
}

/**
 * What ends a session when record itself is killed outright (`kill -9`, which no handler sees): a
 * shell in a group of its own, reading a pipe only record holds. The kernel closes the pipe when
 * record dies however it dies; the shell then ends every process carrying the session's mark
 * (the command, and a daemon it left, such as an interactive Codex's app-server) and
 * removes the session folder, a real folder directly in the temp folder with record's prefix.
 * When record ends normally it does the same itself first, and the shell finds nothing left.
 * One grep reads every process's environment: a grep for each process was a fork and an exec each,
 * most of a millisecond of CPU apiece at every record's end (a second on a desktop running a
 * thousand processes, and 810 greps in one run of this project's suite).
 */
const WATCH = `read -r _ || :
for environ in $(grep -lszxF -- "${SESSION_MARK}=$1" /proc/[0-9]*/environ); do
  pid=\${environ#/proc/}; kill -TERM "\${pid%/environ}" 2>/dev/null
done
case "$1" in "$2"/*/*) ;; "$2"/payload-probe-record-*) [ -d "$1" ] && [ ! -L "$1" ] && rm -rf -- "$1" ;; esac`;

/** Starts the watch of a session folder (directly in `temp`); it outlives record and ends with it. */
export function watchSession(session: string, temp: string): void {
  const watcher = spawn("/bin/sh", ["-c", WATCH, "payload-probe-watch", session, temp], {
    detached: true,
    // Its stderr is record's: a reader of record's stderr sees its end once the watch has cleaned up.
    stdio: ["pipe", "ignore", "inherit"],
  });
  watcher.on("error", () => undefined);
  watcher.unref();
  (watcher.stdin as unknown as { unref(): void }).unref();
}
