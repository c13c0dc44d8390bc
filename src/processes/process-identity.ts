/**
 * What tells one process from another that later gets its pid, and what a person needs to recognise
 * it, from Linux's /proc. Elsewhere (macOS, Windows) neither is known: callers then go by the pid alone.
 */

import { readFileSync } from "node:fs";
import { basename } from "node:path";

/** A /proc file's text, or null when it cannot be read (the process is gone, or there is no /proc). */
function readProc(path: string): string | null {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return null;
  }
}

let bootId: string | undefined;

/** This boot's id: start times count clock ticks since boot, so two boots can repeat one. */
function currentBootId(): string {
  bootId ??= readProc("/proc/sys/kernel/random/boot_id")?.trim() ?? "";
  return bootId;
}

/**
 * The process's boot id and start time (`/proc/<pid>/stat` field 22, clock ticks since boot) as one
 * string, equal for the same process every time and different for a later process with its pid;
 * null when the process is gone or the system has no /proc.
 */
export function processStart(pid: number): string | null {
  const stat = readProc(`/proc/${pid}/stat`);
  if (stat === null) return null;
  // Field 2, the command name in parentheses, may itself hold spaces and ")": fields 3 on follow the last ")".
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const startTime = fields[22 - 3];
  return startTime === undefined ? null : `${currentBootId()}:${startTime}`;
}

const COMMAND_LINE_CHARS = 160;
/** Of a line cut short, the characters kept from its start; the rest of the room goes to its end. */
const COMMAND_HEAD_CHARS = 60;

/**
 * The process's command line for a message: the program by its file name (an interpreter's path can
 * take the whole room: Node under pi's folder is 100 characters), arguments joined by spaces, control
 * characters escaped so a hostile one cannot rewrite the terminal, cut short in the middle, since the
 * end names what the process is doing (`main.js proxy --run x`); null when it cannot be read.
 */
export function processCommandLine(pid: number): string | null {
  const raw = readProc(`/proc/${pid}/cmdline`);
  if (raw === null) return null;
  const [program = "", ...args] = raw.replace(/\0+$/, "").split("\0");
  const line = [basename(program), ...args]
    .join(" ")
    .replace(/[\p{Cc}\p{Cf}]/gu, (char) => `\\u${char.codePointAt(0)!.toString(16).padStart(4, "0")}`);
  if (line === "") return null;
  if (line.length <= COMMAND_LINE_CHARS) return line;
  return `${line.slice(0, COMMAND_HEAD_CHARS)}…${line.slice(line.length - (COMMAND_LINE_CHARS - COMMAND_HEAD_CHARS))}`;
}
