import { lstatSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A private folder for one session (mode 0700, as mkdtemp makes it), and its removal. */
export interface SessionDir {
  path: string;
  /** Removes the folder with what is in it, if it is still the folder made here; else leaves it. */
  remove(): void;
}

/**
 * Makes a fresh folder under the system's temp folder. It is removed only while the same folder
 * (device and inode, not a link) sits at its path: whatever was put there in its place is not ours.
 */
export function makeSessionDir(prefix: string): SessionDir {
  const path = mkdtempSync(join(tmpdir(), prefix));
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
