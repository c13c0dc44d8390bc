import type { TableLook } from "../analysis/table/table-style.js";
import { terminalWidth } from "../text/terminal-width.js";

/**
 * How tables look on stdout. Width: the terminal's, or COLUMNS when stdout is not a terminal (a
 * pipe with no COLUMNS gets every cell whole, for grep and files), or none with `--wide`. Colour:
 * only on a terminal, never when NO_COLOR is set (no-color.org), always when FORCE_COLOR is set
 * to anything but 0 or false (the convention Node and most CLIs follow).
 */
export function tableLook(
  wide: boolean,
  stdout: { isTTY?: boolean; columns?: number } = process.stdout,
  env: NodeJS.ProcessEnv = process.env,
): TableLook {
  return { maxWidth: wide ? null : terminalWidth(stdout, env), colour: wantsColour(stdout, env) };
}

function wantsColour(stdout: { isTTY?: boolean }, env: NodeJS.ProcessEnv): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== "") return false;
  const force = env.FORCE_COLOR;
  if (force !== undefined) return force !== "0" && force !== "false";
  return stdout.isTTY === true;
}
