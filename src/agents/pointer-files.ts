/**
 * What the agent pointers share: reading a config file of the user's (never writing it), finding the
 * user's own config folder, and linking its entries into a temporary folder that stands in for it.
 */
import { existsSync, mkdirSync, readdirSync, symlinkSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { inputError } from "../errors.js";
import { readInputFile } from "../files/input-file.js";

export type Table = Record<string, unknown>;

/** A JSON object or TOML table (a TOML date is an object too, but not a table). */
export const isTable = (value: unknown): value is Table =>
  typeof value === "object" && value !== null && !Array.isArray(value) && !(value instanceof Date);

/** The text of a config file of the user's, or undefined when there is none. */
export function readUserConfig(file: string, what: string): string | undefined {
  return existsSync(file) ? readInputFile(file, what).toString("utf8") : undefined;
}

/** A folder an agent names by an environment variable, else its default under HOME (`~/` expanded). */
export function userConfigDir(env: NodeJS.ProcessEnv, variable: string, ...underHome: string[]): string {
  const home = env.HOME || homedir();
  const named = env[variable];
  if (!named) return join(home, ...underHome);
  return resolve(named === "~" || named.startsWith("~/") ? home + named.slice(1) : named);
}

/**
 * Makes `folder` (under the session's temp dir) and links into it each entry of `userDir` that
 * `keep` accepts, by absolute path: the agent reads the user's files through the links, and what it
 * writes into a linked folder lands where it would without us. Returns the folder.
 */
export function linkedStandIn(userDir: string, folder: string, keep: (name: string) => boolean): string {
  mkdirSync(folder, { recursive: true });
  if (!existsSync(userDir)) return folder;
  let names: string[];
  try {
    names = readdirSync(userDir);
  } catch (error) {
    throw inputError(
      userDir,
      undefined,
      `cannot list the agent's config folder (${(error as NodeJS.ErrnoException).code})`,
    );
  }
  for (const name of names) if (keep(name)) symlinkSync(join(userDir, name), join(folder, name));
  return folder;
}
