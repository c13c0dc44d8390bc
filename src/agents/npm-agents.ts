/**
 * Claude Code, Codex and the Gemini CLI, pinned, in the user's cache, one npm package each. Claude
 * Code and Codex ship their program as a native binary in an optional platform package, and npm
 * installs only the one for this machine; both packages' own start-up only picks that binary
 * (Claude Code's postinstall copies it over its bin placeholder; Codex's bin script execs it), so the
 * install runs no scripts and the binary is started directly: no Node.js in between, whatever Node the
 * user has (Claude Code declares Node >= 22 but its binary needs none). The Gemini CLI is one bundled
 * script for Node >= 20 (as payload-probe), started by its `#!/usr/bin/env node` line; its optional
 * packages (a pseudo-terminal, a keychain) need install scripts and it runs without them.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { UserError } from "../errors.js";
import { agentsCacheDir, installInto, isInstalled } from "./agent-install.js";

export type NpmAgentName = "claude-code" | "codex" | "gemini-cli";

interface NpmAgentSpec {
  /** How messages name it. */
  label: string;
  package: string;
  version: string;
  /** What the install takes on disk (linux-x64), for the progress line. */
  size: string;
  /** The program inside node_modules for this platform and CPU, or undefined where none is published. */
  program(platform: NodeJS.Platform, arch: string): string[] | undefined;
}

/** Codex names its platform folders by Rust target; Linux builds are static (musl). */
const CODEX_TARGETS: Record<string, string> = {
  "linux-x64": "x86_64-unknown-linux-musl",
  "linux-arm64": "aarch64-unknown-linux-musl",
  "darwin-x64": "x86_64-apple-darwin",
  "darwin-arm64": "aarch64-apple-darwin",
};

export const NPM_AGENTS: Record<NpmAgentName, NpmAgentSpec> = {
  "claude-code": {
    label: "Claude Code",
    package: "@anthropic-ai/claude-code",
    version: "2.1.328",
    size: "360 MB",
    program: (platform, arch) =>
      ["linux", "darwin"].includes(platform) && ["x64", "arm64"].includes(arch)
        ? ["@anthropic-ai", `claude-code-${platform}-${arch}`, "claude"]
        : undefined,
  },
  codex: {
    label: "Codex",
    package: "@openai/codex",
    version: "0.169.0",
    size: "400 MB",
    program: (platform, arch) => {
      const target = CODEX_TARGETS[`${platform}-${arch}`];
      return target ? ["@openai", `codex-${platform}-${arch}`, "vendor", target, "bin", "codex"] : undefined;
    },
  },
  "gemini-cli": {
    label: "Gemini CLI",
    package: "@google/gemini-cli",
    version: "0.61.0",
    size: "100 MB",
    program: () => ["@google", "gemini-cli", "bundle", "gemini.js"],
  },
};

export interface NpmAgentInstall {
  agent: NpmAgentName;
  version: string;
  /** The program to start (a native binary, or a script with a #! line). */
  program: string;
  /** The install's folder under the cache. */
  dir: string;
}

const installDir = (agent: NpmAgentName, env: NodeJS.ProcessEnv) =>
  join(agentsCacheDir(env), `${agent}-${NPM_AGENTS[agent].version}`);

function programPath(agent: NpmAgentName, dir: string): string {
  const spec = NPM_AGENTS[agent];
  const parts = spec.program(process.platform, process.arch);
  if (!parts)
    throw new UserError(
      `${spec.label} ${spec.version} publishes no build for ${process.platform}-${process.arch}, so it cannot be installed here`,
    );
  return join(dir, "node_modules", ...parts);
}

/** The cached install of `agent` at its pinned version, or undefined when there is none. */
export function findNpmAgent(agent: NpmAgentName, env: NodeJS.ProcessEnv = process.env) {
  const dir = installDir(agent, env);
  if (!isInstalled(dir)) return undefined;
  const program = programPath(agent, dir);
  if (!existsSync(program)) return undefined;
  return { agent, version: NPM_AGENTS[agent].version, program, dir } satisfies NpmAgentInstall;
}

/** Makes `agent` usable: nothing to do when its install is there, else npm installs it into the cache. */
export async function installNpmAgent(
  agent: NpmAgentName,
  progress: (line: string) => void,
  env: NodeJS.ProcessEnv = process.env,
): Promise<NpmAgentInstall> {
  const spec = NPM_AGENTS[agent];
  const existing = findNpmAgent(agent, env);
  if (existing) {
    progress(`${spec.label} ${spec.version} is already there (${existing.dir})`);
    return existing;
  }
  const dir = installDir(agent, env);
  // Checked before npm runs, so an unsupported machine downloads nothing.
  programPath(agent, dir);
  const started = Date.now();
  progress(`installing ${spec.label} ${spec.version} into ${dir} (npm install, about ${spec.size}) …`);
  await installInto(
    dir,
    { label: spec.label, dependencies: { [spec.package]: spec.version }, pins: { [agent]: spec.version } },
    env,
  );
  progress(`installed in ${Math.round((Date.now() - started) / 1000)} s`);
  const installed = findNpmAgent(agent, env);
  if (!installed) throw new Error(`${spec.label} is not usable after npm installed it into ${dir}`);
  return installed;
}
