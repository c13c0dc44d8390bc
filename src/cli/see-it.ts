import { cliName } from "../text/invoked-as.js";
import { defaultRunsDir } from "./arg-values.js";

/** Where to look next at a run, with the command the user started payload-probe with. */
export function seeItLine(name: string, dir: string, runsDir: string, firstSeq: number): string {
  const run = runRef(name, dir, runsDir);
  return `see it: ${cliName()} report ${run} · show ${run} ${firstSeq} · view ${run}`;
}

/** A run as a reader command takes it: its name under the default runs folder, else its folder. */
export function runRef(name: string, dir: string, runsDir: string): string {
  return runsDir === defaultRunsDir() ? name : dir;
}
