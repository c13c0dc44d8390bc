/** What a terminal of unknown width is taken to be. */
const DEFAULT_COLUMNS = 80;

/**
 * The width output is fitted to: the terminal's, or COLUMNS when stdout is not a terminal; null for
 * a pipe with no COLUMNS (grep and files get every line whole).
 */
export function terminalWidth(
  stdout: { isTTY?: boolean; columns?: number } = process.stdout,
  env: NodeJS.ProcessEnv = process.env,
): number | null {
  const fromEnv = /^\d+$/.test(env.COLUMNS ?? "") ? Number(env.COLUMNS) : 0;
  if (stdout.isTTY) return stdout.columns || fromEnv || DEFAULT_COLUMNS;
  return fromEnv > 0 ? fromEnv : null;
}
