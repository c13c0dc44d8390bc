/**
 * The one way real agents get into the user's cache (outside the checkout): npm installs pinned
 * packages from the public registry into a folder of their own under `<cache>/payload-probe/agents/`,
 * and a stamp file written last says the folder is complete. Used by pi's install and the native
 * agents' (Claude Code, Codex).
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { UserError } from "../errors.js";

/** `<cache>/payload-probe/agents`, honouring XDG_CACHE_HOME. */
export function agentsCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CACHE_HOME || join(env.HOME || homedir(), ".cache");
  return join(base, "payload-probe", "agents");
}

/** Written last by an install, so a folder without it is an unfinished install and never used. */
const STAMP = "payload-probe-install.json";

/** Whether `dir` holds a finished install. */
export const isInstalled = (dir: string) => existsSync(join(dir, STAMP));

/** npm's words for a registry it could not reach. */
const OFFLINE =
  /ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|EHOSTUNREACH|network|socket hang up/i;

function runNpm(args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn("npm", args, { cwd, env, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8");
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stderr }));
  });
}

/** What is being installed: its name in messages and the exact versions wanted. */
export interface InstallSpec {
  /** Named in the manifest and in every message (`pi`, `Claude Code`). */
  label: string;
  dependencies: Record<string, string>;
  /** Kept in the stamp file, so the folder says what it holds. */
  pins: Record<string, string>;
}

/**
 * npm-installs the spec's dependencies into a fresh folder beside `dir`, then renames it into place:
 * an interrupted install leaves no half-made folder under the final name, and two installs at once
 * both end with one complete folder. No install scripts run: every agent installed here works
 * without them (a native agent's binary is started from its platform package).
 */
export async function installInto(dir: string, spec: InstallSpec, env: NodeJS.ProcessEnv): Promise<void> {
  const work = `${dir}.installing-${process.pid}`;
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const manifest = {
    private: true,
    description: `payload-probe's private install of ${spec.label} (made by 'payload-probe agents install')`,
    dependencies: spec.dependencies,
  };
  writeFileSync(join(work, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  // pi-mcp-adapter's peer range (pi-ai ^0.84) predates pi 0.85 though it runs on it (pi hands
  // extensions its own pi-ai); legacy peer handling installs no second copy instead of failing.
  const npm = await runNpm(
    ["install", "--no-audit", "--no-fund", "--ignore-scripts", "--legacy-peer-deps", "--loglevel=error"],
    work,
    env,
  );
  if (npm.code !== 0) {
    rmSync(work, { recursive: true, force: true });
    const tail = npm.stderr.trim().split("\n").slice(-3).join(" — ");
    if (OFFLINE.test(npm.stderr))
      throw new UserError(
        `the npm registry could not be reached, so ${spec.label} was not installed (npm said: ${tail})`,
      );
    throw new UserError(`npm install for ${spec.label} failed (exit ${npm.code}): ${tail}`);
  }
  writeFileSync(join(work, STAMP), `${JSON.stringify({ ...spec.pins, installedAt: new Date().toISOString() })}\n`);
  try {
    renameSync(work, dir);
  } catch (error) {
    // Another install finished first: its folder is as good as this one.
    rmSync(work, { recursive: true, force: true });
    if (!isInstalled(dir)) throw error;
  }
}
