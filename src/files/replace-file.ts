import { mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { threadId } from "node:worker_threads";

/**
 * Writes `path` whole or not at all: through a temp file of this thread and a rename, so a reader
 * never sees a half-written file and two writers at once leave one of their files, never a mix. The
 * temp file is named by process and thread: two threads of one process (the capture worker and the
 * main thread) sharing one would truncate each other's write, and the later rename would find it
 * gone. The folder is made when missing; a temp file that could not be renamed is removed.
 */
export function replaceFile(path: string, data: string | Buffer): void {
  mkdirSync(dirname(path), { recursive: true });
  const temp = `${path}.${process.pid}-${threadId}.tmp`;
  try {
    writeFileSync(temp, data);
    renameSync(temp, path);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
}
