import { usageError } from "./args.js";

type FormatFlags = { plain?: boolean; json?: boolean; markdown?: boolean };

/** The output form a command was asked for; two at once is a usage error. */
export function outputFormat<T extends string>(
  command: string,
  flags: FormatFlags,
  fallback: T,
): T | "plain" | "json" | "markdown" {
  const chosen = (["plain", "json", "markdown"] as const).filter((flag) => flags[flag]);
  if (chosen.length > 1) throw usageError(command, `choose one of --${chosen.join(", --")}`);
  return chosen[0] ?? fallback;
}
