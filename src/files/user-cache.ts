import { homedir } from "node:os";
import { join } from "node:path";

/**
 * payload-probe's folder in the user's cache (`$XDG_CACHE_HOME/payload-probe`, else
 * `~/.cache/payload-probe`): things worth keeping between runs and clones that can always be made
 * again — the compiled SQLite addon (run.sh), token counts, primed MCP caches.
 */
export function userCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_CACHE_HOME || join(homedir(), ".cache"), "payload-probe");
}
