import { closeSync, openSync, readSync } from "node:fs";
import { inputError } from "../errors.js";

/**
 * The largest file a user hands in whole: a probe, MCP config, profile, stub fixture, tolerances or
 * pricing file. Those are a few kilobytes (the largest committed one, a profile, is 13 KB); 1 MiB
 * is generous, and a YAML parser given 30 MB took 37 s and 1.6 GB.
 */
export const MAX_INPUT_FILE_BYTES = 1024 * 1024;

/**
 * The bytes of an input file (`what` names its kind in messages: "probe file"), or a UserError: not
 * found, not readable, or over MAX_INPUT_FILE_BYTES. At most one byte past the limit is read, whatever
 * the file says its size is, so a device or a pipe (`/dev/zero`) is refused too.
 */
export function readInputFile(file: string, what: string): Buffer {
  let fd: number;
  try {
    fd = openSync(file, "r");
  } catch (error) {
    throw unreadable(file, what, error);
  }
  try {
    const buffer = Buffer.allocUnsafe(MAX_INPUT_FILE_BYTES + 1);
    let filled = 0;
    while (filled < buffer.length) {
      const read = readOrThrow(fd, buffer, filled, file, what);
      if (read === 0) break;
      filled += read;
    }
    if (filled > MAX_INPUT_FILE_BYTES)
      throw inputError(
        file,
        undefined,
        `expected a ${what} of at most 1 MiB, but it is larger (reading stopped there)`,
      );
    return buffer.subarray(0, filled);
  } finally {
    closeSync(fd);
  }
}

function readOrThrow(fd: number, buffer: Buffer, offset: number, file: string, what: string): number {
  try {
    return readSync(fd, buffer, offset, buffer.length - offset, null);
  } catch (error) {
    throw unreadable(file, what, error);
  }
}

function unreadable(file: string, what: string, error: unknown): Error {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === "ENOENT") return inputError(file, undefined, `${what} not found`);
  return inputError(file, undefined, `cannot read the ${what} (${code ?? String(error)})`);
}
