import { cpSync, existsSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, isAbsolute, join, relative, resolve, sep } from "node:path";
import { type CaptureRun, openCaptureRun, runFolderLockPath } from "../capture/capture-run.js";
import { liveRunDir } from "../capture/run-folder.js";
import type { RequestRecord } from "../capture/types.js";
import { inputError } from "../errors.js";
import { countJsonlRows, JsonlWriter } from "../jsonl.js";
import { initEmptyCache, readCache, writeCacheEntry } from "../mcp/cache.js";
import { loadMcpConfig } from "../mcp/config.js";
import { mcpExtension } from "../mcp/extension.js";
import { ServerManager } from "../mcp/server-manager.js";
import { mcpTextsSchema } from "../mcp/texts-schema.js";
import type { McpConfig } from "../mcp/types.js";
import { describeProcess, lockWaitMs, type PidLock, waitForLock } from "../pid-lock.js";
import { PROJECT_ROOT } from "../project-root.js";
import { codecFor } from "../providers/codecs.js";
import { httpTransport } from "../providers/http-transport.js";
import { baseUrlFor, resolveModel } from "../providers/models.js";
import { createScriptedModel } from "../providers/scripted-model.js";
import { Agent, type SkillsHook } from "../runtime/agent.js";
import type { EventBus } from "../runtime/events.js";
import { extensionTexts, loadProfile } from "../runtime/load-profile.js";
import type { Profile } from "../runtime/profile.js";
import type { Extension } from "../runtime/types.js";
import { createDisclosure } from "../skills/disclosure/disclosure.js";
import { disclosureTextsSchema } from "../skills/disclosure/texts-schema.js";
import type { CatalogDirs, CatalogLayer } from "../skills/disclosure/types.js";
import { discoverSkills } from "../skills/discover.js";
import { expandSkillCommand } from "../skills/expand.js";
import { renderSkillsBlock } from "../skills/prompt-block.js";
import type { SkillDiagnostic } from "../skills/types.js";
import { readWireLog, WIRE_LOG_ENV } from "../stub-mcp/wire-log.js";
import { checkExpectations, type RunObservation } from "./expect.js";
import { checkProbeLimits, DEFAULT_LIMITS, limitTransport, REQUESTS_PER_PROMPT, type RunLimits } from "./limits.js";
import { PRIME_MEMO_ENV, primeMemoKey, readPrimeMemo, savePrimeMemo } from "./prime-memo.js";
import { probeEnvironment } from "./probe-env.js";
import { substituteSkillPaths } from "./script-placeholders.js";
import type { Probe } from "./types.js";
import { closeWorkspace, openWorkspace, removeWorkspace } from "./workspace-list.js";

export interface RunOptions {
  root?: string;
  runsDir?: string;
  /** Also write to runs/payload-probe.db (default true). */
  database?: boolean;
  /** Where probe workspaces are made (default `defaultWorkspaceRoot()`); tests use their own. */
  workspaceRoot?: string;
  /** Requests and payload bytes a run may make (default `DEFAULT_LIMITS`). */
  limits?: RunLimits;
  /** Store the secrets found in bodies and events as they were instead of markers (`--keep-secrets`). */
  keepSecrets?: boolean;
  /**
   * Send the model's requests over HTTP to this base URL (the form `mock` prints:
   * `http://host:port/v1`) instead of answering them in process from the probe's script.
   */
  providerUrl?: string;
  /** Told when another run of the probe holds its folders and this one waits (default: a line on stderr). */
  onWait?: (message: string) => void;
}

export interface RunResult {
  probe: Probe;
  runId: string;
  dir: string;
  records: RequestRecord[];
  failures: string[];
  skillDiagnostics: SkillDiagnostic[];
  /** Why the probe was not run on this agent (its set-up cannot be expressed there); no records then. */
  skipped?: string;
  /** Which agent ran it: the runtime, or the real pi. */
  agent?: "runtime" | "pi";
}

/**
 * Workspace paths enter the system prompt, so the default root is one fixed path rather than
 * whatever $TMPDIR says: the committed baselines then hold on every machine. PAYLOAD_PROBE_WORKSPACE
 * moves it (sizes then differ from the baselines by the path's length).
 */
export function defaultWorkspaceRoot(): string {
  const fixed = process.platform === "win32" ? join(tmpdir(), "payload-probe") : "/tmp/payload-probe";
  return process.env.PAYLOAD_PROBE_WORKSPACE || fixed;
}

export interface Workspace {
  base: string;
  cwd: string;
  agentDir: string;
  home: string;
  packageDir: string;
}

/**
 * A probe's own folder outside the checkout: the session's cwd, agent dir and home live there, so
 * the paths that enter the system prompt are the same on every machine and every clone.
 */
export function prepareWorkspace(probe: Probe, root: string): Workspace {
  const base = join(root, probe.name);
  removeWorkspace(root, base);
  const paths = {
    base,
    cwd: join(base, "cwd"),
    agentDir: join(base, "agent"),
    home: join(base, "home"),
    packageDir: join(base, "pkg"),
  };
  for (const dir of [paths.cwd, paths.agentDir, paths.home, paths.packageDir]) mkdirSync(dir, { recursive: true });
  openWorkspace(base);
  return paths;
}

/** Skill paths are copied into the workspace so a skill's location does not depend on the checkout. */
export function stageSkills(paths: string[], root: string, base: string): string[] {
  return paths.map((path) => {
    const source = isAbsolute(path) ? path : join(root, path);
    const relative = isAbsolute(path) ? basename(path) : path;
    const target = join(base, "staged", relative);
    if (existsSync(source)) cpSync(source, target, { recursive: true, dereference: false, verbatimSymlinks: true });
    return target;
  });
}

/**
 * Fill the metadata cache from each server before the measured run; nothing of it reaches the wire
 * log. Entries primed before from the same builds and command lines are written again without
 * starting the servers (prime-memo.ts says why that is the same); others come from a connection.
 * `env` is the servers' environment; the memo's place and switch are the user's (this process's).
 */
export async function primeCache(
  configPath: string,
  cachePath: string,
  workspace: { cwd: string; agentDir: string; home: string },
  root: string,
  env: NodeJS.ProcessEnv,
): Promise<void> {
  initEmptyCache(cachePath);
  const config = loadMcpConfig({
    cwd: workspace.cwd,
    agentDir: workspace.agentDir,
    home: workspace.home,
    configPath,
    exclusive: true,
    env,
  });
  const key = process.env[PRIME_MEMO_ENV] === "off" ? null : primeMemoKey(config, root, env, root);
  const primed = key && readPrimeMemo(key);
  if (primed) {
    for (const [name, entry] of primed) writeCacheEntry(cachePath, name, { ...entry, cachedAt: Date.now() });
    return;
  }
  await primeByConnecting(config, configPath, cachePath, root, env);
  if (key) savePrimeMemo(key, Object.entries(readCache(cachePath).file.servers));
}

async function primeByConnecting(
  config: McpConfig,
  configPath: string,
  cachePath: string,
  root: string,
  env: NodeJS.ProcessEnv,
): Promise<void> {
  const manager = new ServerManager(
    config,
    { cachePath, env, baseDir: root, log: () => undefined, onMetadata: () => undefined },
    {},
  );
  try {
    for (const server of manager.enabled()) {
      try {
        await manager.connect(server.name);
      } catch (error) {
        // A server that cannot start is bad input in the config, not a bug: name the server and the file.
        const field = `mcpServers.${server.name}.${server.entry.url ? "url" : "command"}`;
        throw inputError(
          configPath,
          field,
          `expected a server that starts, but connecting "${server.name}" failed: ${(error as Error).message}`,
        );
      }
    }
  } finally {
    await manager.closeAll();
  }
}

interface ProbeSkills {
  hook?: SkillsHook;
  /** The load_skill model's extension (registers `load_skill`). */
  extension?: Extension;
  /** Filled at discovery; the load_skill model adds its dependency drops when its extension starts. */
  diagnostics: SkillDiagnostic[];
  /** Skills by name → file path, for `{{skill:name}}` in the model script. */
  paths: Map<string, string>;
  /** Names of the skills the model can see or expand, in order; asked after the run. */
  loaded(): string[];
}

/**
 * The load_skill model: each `agent.skillLayers` folder is copied to its layer's place in the
 * workspace (builtin apart, user under the agent dir, project under cwd's .pi), then catalogued.
 */
function disclosureSkills(profile: Profile, probe: Probe, workspace: Workspace, root: string): ProbeSkills {
  const places: Record<CatalogLayer, string> = {
    builtin: join(workspace.base, "builtin-skills"),
    user: join(workspace.agentDir, "skills"),
    project: join(workspace.cwd, ".pi", "skills"),
  };
  const dirs: CatalogDirs = {};
  for (const [layer, source] of Object.entries(probe.agent.skillLayers ?? {}) as [CatalogLayer, string][]) {
    cpSync(isAbsolute(source) ? source : join(root, source), places[layer], {
      recursive: true,
      verbatimSymlinks: true,
    });
    dirs[layer] = places[layer];
  }
  const disclosure = createDisclosure({
    dirs,
    texts: extensionTexts(profile, "loadSkill", disclosureTextsSchema),
    cwd: workspace.cwd,
    model: probe.model.id,
  });
  return {
    hook: { block: disclosure.block, expand: (text) => text, environment: disclosure.environment },
    extension: disclosure.extension,
    diagnostics: disclosure.diagnostics,
    paths: new Map(disclosure.found.map((skill) => [skill.meta.name, skill.entryPath])),
    loaded: () => disclosure.catalog().map((skill) => skill.meta.name),
  };
}

function skillsHook(profile: Profile, probe: Probe, workspace: Workspace, root: string): ProbeSkills {
  if (probe.agent.skillMode === "load_skill") return disclosureSkills(profile, probe, workspace, root);
  if (probe.agent.noSkills && probe.agent.skills.length === 0)
    return { diagnostics: [], paths: new Map(), loaded: () => [] };
  const { skills, diagnostics } = discoverSkills({
    cwd: workspace.cwd,
    agentDir: workspace.agentDir,
    home: workspace.home,
    skillPaths: stageSkills(probe.agent.skills, root, workspace.base),
    noSkills: probe.agent.noSkills,
    trusted: probe.agent.trusted,
  });
  return {
    diagnostics,
    paths: new Map(skills.map((skill) => [skill.name, skill.filePath])),
    loaded: () => skills.map((skill) => skill.name),
    hook: {
      block: (active) => renderSkillsBlock(skills, active, profile.skills),
      expand: (text) => expandSkillCommand(text, skills),
    },
  };
}

/** Discovery's outcome with workspace-relative paths, so a probe can state it independently of the temp folder. */
function skillsObservation(loaded: string[], diagnostics: SkillDiagnostic[], base: string): RunObservation["skills"] {
  const rel = (path: string) => relative(base, path).split(sep).join("/");
  return {
    loaded,
    diagnostics: diagnostics.map((d) => ({
      type: d.type,
      message: d.message,
      path: rel(d.path),
      winner: d.collision && rel(d.collision.winnerPath),
      loser: d.collision && rel(d.collision.loserPath),
    })),
  };
}

/** Where a run reads and writes, and how far it may go. */
export interface RunPlace {
  root: string;
  runsDir: string;
  workspaceRoot: string;
  limits: RunLimits;
  providerUrl?: string;
}

export function runPlace(options: RunOptions): RunPlace {
  const root = options.root ?? PROJECT_ROOT;
  return {
    root,
    runsDir: options.runsDir ?? join(root, "runs"),
    workspaceRoot: options.workspaceRoot ?? defaultWorkspaceRoot(),
    limits: options.limits ?? DEFAULT_LIMITS,
    providerUrl: options.providerUrl,
  };
}

/**
 * Two runs of one probe would share its workspace and its run folder (two clones share the workspace
 * root), so a run holds a lock on each until it is closed; the second run waits. The workspace is
 * always locked first, so two runs can never hold one lock each and wait for the other's.
 */
export async function lockProbeFolders(
  name: string,
  place: RunPlace,
  onWait: (message: string) => void,
  /** The run folder's name, when it is not the probe's (`<probe>@pi` shares the probe's workspace). */
  runName = name,
): Promise<{ runFolder: PidLock; release(): void }> {
  const waitFor = (path: string) => {
    const maxWaitMs = lockWaitMs();
    return waitForLock(
      path,
      (pid) =>
        onWait(`waiting for ${name}: ${describeProcess(pid)} holds ${path} (giving up after ${maxWaitMs / 1000} s)`),
      maxWaitMs,
    );
  };
  const workspace = await waitFor(join(place.workspaceRoot, `${name}.lock`));
  try {
    const runFolder = await waitFor(runFolderLockPath(place.runsDir, runName));
    return {
      runFolder,
      release() {
        runFolder.release();
        closeWorkspace(join(place.workspaceRoot, name));
        workspace.release();
      },
    };
  } catch (error) {
    workspace.release();
    throw error;
  }
}

export const announceWait = (message: string) => process.stderr.write(`payload-probe: ${message}\n`);

/** The MCP adapter, when the probe uses one: its cache set up as the probe says, its wire log in the run folder. */
async function mcpExtensions(
  probe: Probe,
  profile: Profile,
  workspace: Workspace,
  root: string,
  wirePath: string,
): Promise<Extension[]> {
  const mcp = probe.agent.mcp;
  if (!mcp) return [];
  const serverEnv = probeEnvironment(workspace.home);
  const cachePath = join(workspace.agentDir, "mcp-cache.json");
  if (mcp.cache === "valid") await primeCache(mcp.config, cachePath, workspace, root, serverEnv);
  if (mcp.cache === "empty-file") initEmptyCache(cachePath);
  return [
    mcpExtension({
      texts: extensionTexts(profile, "mcp", mcpTextsSchema),
      configPath: mcp.config,
      exclusive: mcp.exclusive,
      cachePath,
      home: workspace.home,
      env: { ...serverEnv, [WIRE_LOG_ENV]: wirePath },
      baseDir: root,
    }),
  ];
}

/** events.jsonl and the database's events: each event carries the seq of the request it precedes. */
function openEventLog(run: CaptureRun): { log(type: string, data: Record<string, unknown>): void; close(): void } {
  const file = new JsonlWriter(join(run.liveDir, "events.jsonl"));
  let index = 0;
  return {
    log(type, event) {
      const seq = run.capture.nextSeq();
      const idx = index++;
      // A tool result holds what the tool read (a .env file): stored as the bodies are, secrets replaced.
      const data = run.capture.stored(event);
      file.write({ idx, seq, type, ...data });
      run.db?.addEvent(run.id, idx, seq, type, data);
    },
    close: () => file.close(),
  };
}

/** What the probe's expect block is checked against, collected from the agent's events as they happen. */
function observeAgent(
  bus: EventBus,
  observation: RunObservation,
  log: (type: string, data: Record<string, unknown>) => void,
  wirePath: string,
): void {
  bus.on("before_provider_request", ({ request, registered, active }) => {
    observation.systemTexts.push(
      request.kind === "loop" ? codecFor(request.api).dissect(request.body).systemParts.join("\n") : "",
    );
    observation.surfaces.push({ registered, active });
    observation.wireLinesBefore.push(existsSync(wirePath) ? countJsonlRows(wirePath) : 0);
    log("request", { kind: request.kind, registered, active });
  });
  bus.on("tool_call", (e) => log("tool_call", { ...e }));
  bus.on("tool_result", (e) => {
    observation.toolResults.push(e.content);
    log("tool_result", { ...e });
  });
  bus.on("tools_changed", (e) => log("tools_changed", { ...e }));
  bus.on("extension_event", (e) => log(e.type, e.data));
  bus.on("turn_start", (e) => log("turn_start", { ...e }));
  bus.on("turn_end", (e) => log("turn_end", { ...e }));
}

interface Conversation {
  probe: Probe;
  place: RunPlace;
  profile: Profile;
  workspace: Workspace;
  extensions: Extension[];
  skills: ProbeSkills;
  run: CaptureRun;
  wirePath: string;
}

/** The agent on the scripted model, through the capture and the run's limits, given every prompt in turn. */
async function converse(c: Conversation, observation: RunObservation): Promise<void> {
  const { probe, place, run } = c;
  const events = openEventLog(run);
  const codec = codecFor(probe.model.api);
  let agent: Agent | undefined;
  try {
    agent = await Agent.create({
      profile: c.profile,
      cwd: probe.agent.cwd ? join(place.root, probe.agent.cwd) : c.workspace.cwd,
      // What pi's tools see too (pi-runner): the probe's environment, not the user's shell.
      env: probeEnvironment(c.workspace.home),
      agentDir: c.workspace.agentDir,
      packageDir: c.workspace.packageDir,
      model: resolveModel(
        probe.model.id,
        probe.model.api,
        place.providerUrl === undefined ? undefined : baseUrlFor(probe.model.api, place.providerUrl),
      ),
      codec,
      transport: limitTransport(
        run.capture.wrap(
          place.providerUrl === undefined
            ? createScriptedModel(codec, {
                loop: substituteSkillPaths(probe.model.script, c.skills.paths, probe.file),
                sampling: probe.model.sampling,
              })
            : httpTransport(),
        ),
        place.limits,
        probe.file,
      ),
      filter: { allow: probe.agent.tools, deny: probe.agent.excludeTools, noBuiltinTools: probe.agent.noBuiltinTools },
      noTools: probe.agent.noTools,
      skills: c.skills.hook,
      extensions: c.skills.extension ? [...c.extensions, c.skills.extension] : c.extensions,
      toolSnapshot: probe.agent.skillMode === "load_skill" ? "per-run" : "per-request",
      maxRequestsPerPrompt: REQUESTS_PER_PROMPT,
      observe: (bus) => observeAgent(bus, observation, events.log, c.wirePath),
    });
    for (const prompt of probe.prompts) await agent.prompt(prompt);
  } finally {
    await agent?.shutdown();
    events.close();
  }
}

/** What the stub servers received, as the expect block reads it. */
export function wireObservation(wirePath: string): RunObservation["wire"] {
  if (!existsSync(wirePath)) return [];
  return readWireLog(wirePath).map((line) => {
    const message = line.message as { method?: string; params?: unknown };
    return { server: line.server, method: message.method, params: message.params };
  });
}

/** After the agent has shut down: what the stub servers received, the skills outcome, the expect verdict. */
function finish(c: Conversation, observation: RunObservation): RunResult {
  observation.wire = wireObservation(c.wirePath);
  observation.skills = skillsObservation(c.skills.loaded(), c.skills.diagnostics, c.workspace.base);
  const failures = checkExpectations(c.probe.expect, observation);
  c.run.close(failures.length === 0 ? "passed" : "failed");
  const { run, probe } = c;
  return {
    probe,
    runId: run.id,
    dir: run.dir,
    records: run.capture.records,
    failures,
    skillDiagnostics: c.skills.diagnostics,
  };
}

/**
 * Builds what one run is made of: the profile, the MCP extension (its cache set up first, outside the
 * capture), the capture run in the folder the caller has locked, and the probe's skills.
 */
async function buildConversation(
  probe: Probe,
  place: RunPlace,
  workspace: Workspace,
  capture: { database?: boolean; keepSecrets?: boolean; folderLock: PidLock },
): Promise<Conversation> {
  // resolve, not join: `run --profile` hands over an absolute path.
  const profile = loadProfile(probe.agent.profile ? resolve(place.root, probe.agent.profile) : undefined);
  // Named before the run opens (the MCP servers are configured first): the run's live folder, swapped in at close.
  const wirePath = join(liveRunDir(place.runsDir, probe.name), "mcp-wire.jsonl");
  const extensions = await mcpExtensions(probe, profile, workspace, place.root, wirePath);
  const run = openCaptureRun({ name: probe.name, runsDir: place.runsDir, markers: probe.markers, ...capture });
  const skills = skillsHook(profile, probe, workspace, place.root);
  return { probe, place, profile, workspace, extensions, skills, run, wirePath };
}

/** The conversation, observed; a run that fails here is closed as `error` before the failure goes on. */
async function observe(conversation: Conversation): Promise<RunObservation> {
  const observation: RunObservation = {
    records: conversation.run.capture.records,
    systemTexts: [],
    toolResults: [],
    surfaces: [],
    wire: [],
    wireLinesBefore: [],
  };
  try {
    await converse(conversation, observation);
  } catch (error) {
    // A write that failed keeps the previous run folder; close then says where this run's files are.
    conversation.run.close("error", { failure: error });
    throw error;
  }
  return observation;
}

/**
 * One probe run: check its size against the limits, lock its folders, prepare the workspace, build
 * the agent's parts, observe the conversation, finish with the expect verdict.
 */
export async function runProbe(probe: Probe, options: RunOptions = {}): Promise<RunResult> {
  const place = runPlace(options);
  checkProbeLimits(probe, place.limits);
  const locks = await lockProbeFolders(probe.name, place, options.onWait ?? announceWait);
  try {
    const workspace = prepareWorkspace(probe, place.workspaceRoot);
    const conversation = await buildConversation(probe, place, workspace, {
      database: options.database,
      keepSecrets: options.keepSecrets,
      folderLock: locks.runFolder,
    });
    return finish(conversation, await observe(conversation));
  } finally {
    locks.release();
  }
}
