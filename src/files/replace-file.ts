import { mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";

/**
 * Writes `path` whole or not at all: through a temp file of this process and a rename, so a reader
 * never sees a half-written file and two processes writing at once leave one of their files, never
 * a mix. The folder is made when missing; a temp file that could not be renamed is removed.
 */
export function replaceFile(path: string, data: string | Buffer): void {
  mkdirSync(dirname(path), { recursive: true });
  const temp = `${path}.${process.pid}.tmp`;
  try {
    writeFileSync(temp, data);
    renameSync(temp, path);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
}
