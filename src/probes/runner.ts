import { cpSync, existsSync, mkdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, isAbsolute, join, relative, sep } from "node:path";
import { countLines } from "../analysis/file-lines.js";
import { openCaptureRun } from "../capture/capture-run.js";
import { JsonlWriter } from "../capture/jsonl.js";
import type { RequestRecord } from "../capture/types.js";
import { inputError } from "../errors.js";
import { initEmptyCache } from "../mcp/cache.js";
import { loadMcpConfig } from "../mcp/config.js";
import { mcpExtension } from "../mcp/extension.js";
import { ServerManager } from "../mcp/server-manager.js";
import { mcpTextsSchema } from "../mcp/texts-schema.js";
import { resolveModel } from "../providers/models.js";
import { openaiCompletions } from "../providers/openai-completions.js";
import { createScriptedModel } from "../providers/scripted-model.js";
import { Agent, type SkillsHook } from "../runtime/agent.js";
import { extensionTexts, loadProfile } from "../runtime/load-profile.js";
import { PROJECT_ROOT, type Profile } from "../runtime/profile.js";
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
import { substituteSkillPaths } from "./script-placeholders.js";
import type { Probe } from "./types.js";

export interface RunOptions {
  root?: string;
  runsDir?: string;
  /** Also write to runs/payload-probe.db (default true). */
  database?: boolean;
  /** Where probe workspaces are made (default `$TMPDIR/payload-probe`); tests use their own. */
  workspaceRoot?: string;
}

export interface RunResult {
  probe: Probe;
  runId: string;
  dir: string;
  records: RequestRecord[];
  failures: string[];
  skillDiagnostics: SkillDiagnostic[];
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

/**
 * A probe's own folder outside the checkout: the session's cwd, agent dir and home live there, so
 * the paths that enter the system prompt are the same on every machine and every clone.
 */
function prepareWorkspace(
  probe: Probe,
  root: string,
): { base: string; cwd: string; agentDir: string; home: string; packageDir: string } {
  const base = join(root, probe.name);
  rmSync(base, { recursive: true, force: true });
  const paths = {
    base,
    cwd: join(base, "cwd"),
    agentDir: join(base, "agent"),
    home: join(base, "home"),
    packageDir: join(base, "pkg"),
  };
  for (const dir of [paths.cwd, paths.agentDir, paths.home, paths.packageDir]) mkdirSync(dir, { recursive: true });
  return paths;
}

/** Skill paths are copied into the workspace so a skill's location does not depend on the checkout. */
function stageSkills(paths: string[], root: string, base: string): string[] {
  return paths.map((path) => {
    const source = isAbsolute(path) ? path : join(root, path);
    const relative = isAbsolute(path) ? basename(path) : path;
    const target = join(base, "staged", relative);
    if (existsSync(source)) cpSync(source, target, { recursive: true, dereference: false, verbatimSymlinks: true });
    return target;
  });
}

/** Fill the metadata cache from each server before the measured run; nothing of it reaches the wire log. */
async function primeCache(
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
function disclosureSkills(
  profile: Profile,
  probe: Probe,
  workspace: ReturnType<typeof prepareWorkspace>,
  root: string,
): ProbeSkills {
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

function skillsHook(
  profile: Profile,
  probe: Probe,
  workspace: ReturnType<typeof prepareWorkspace>,
  root: string,
): ProbeSkills {
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

export async function runProbe(probe: Probe, options: RunOptions = {}): Promise<RunResult> {
  const root = options.root ?? PROJECT_ROOT;
  const runsDir = options.runsDir ?? join(root, "runs");
  const dir = join(runsDir, probe.name);
  const workspace = prepareWorkspace(probe, options.workspaceRoot ?? defaultWorkspaceRoot());
  const profile = loadProfile(probe.agent.profile ? join(root, probe.agent.profile) : undefined);
  const wirePath = join(dir, "mcp-wire.jsonl");
  const baseEnv = { ...process.env };
  delete baseEnv[WIRE_LOG_ENV];

  const extensions: Extension[] = [];
  const mcp = probe.agent.mcp;
  if (mcp) {
    const cachePath = join(workspace.agentDir, "mcp-cache.json");
    if (mcp.cache === "valid") await primeCache(mcp.config, cachePath, workspace, root, baseEnv);
    if (mcp.cache === "empty-file") initEmptyCache(cachePath);
    extensions.push(
      mcpExtension({
        texts: extensionTexts(profile, "mcp", mcpTextsSchema),
        configPath: mcp.config,
        exclusive: mcp.exclusive,
        cachePath,
        home: workspace.home,
        env: { ...baseEnv, [WIRE_LOG_ENV]: wirePath },
        baseDir: root,
      }),
    );
  }

  const run = openCaptureRun({ name: probe.name, runsDir, database: options.database, markers: probe.markers });
  const { id: runId, capture, db } = run;
  const codec = openaiCompletions;
  const events = new JsonlWriter(join(dir, "events.jsonl"));
  let eventIndex = 0;
  const logEvent = (type: string, data: Record<string, unknown>) => {
    const seq = capture.nextSeq();
    events.write({ idx: eventIndex, seq, type, ...data });
    db?.addEvent(runId, eventIndex++, seq, type, data);
  };

  const observation: RunObservation = {
    records: capture.records,
    systemTexts: [],
    toolResults: [],
    surfaces: [],
    wire: [],
    wireLinesBefore: [],
  };
  const probeSkills = skillsHook(profile, probe, workspace, root);
  const { hook, diagnostics, paths: skillPaths } = probeSkills;
  if (probeSkills.extension) extensions.push(probeSkills.extension);
  let completed = false;
  let agent: Agent | undefined;
  try {
    agent = await Agent.create({
      profile,
      cwd: probe.agent.cwd ? join(root, probe.agent.cwd) : workspace.cwd,
      agentDir: workspace.agentDir,
      packageDir: workspace.packageDir,
      model: resolveModel(probe.model.id, probe.model.api),
      codec,
      transport: capture.wrap(
        createScriptedModel(codec, {
          loop: substituteSkillPaths(probe.model.script, skillPaths, probe.file),
          sampling: probe.model.sampling,
        }),
      ),
      filter: { allow: probe.agent.tools, deny: probe.agent.excludeTools, noBuiltinTools: probe.agent.noBuiltinTools },
      noTools: probe.agent.noTools,
      skills: hook,
      extensions,
      toolSnapshot: probe.agent.skillMode === "load_skill" ? "per-run" : "per-request",
      observe: (bus) => {
        bus.on("before_provider_request", ({ request, registered, active }) => {
          if (request.kind === "loop") {
            observation.systemTexts.push(codec.dissect(request.body).systemParts.join("\n"));
          } else {
            observation.systemTexts.push("");
          }
          observation.surfaces.push({ registered, active });
          observation.wireLinesBefore.push(existsSync(wirePath) ? countLines(wirePath) : 0);
          logEvent("request", { kind: request.kind, registered, active });
        });
        bus.on("tool_call", (e) => logEvent("tool_call", { ...e }));
        bus.on("tool_result", (e) => {
          observation.toolResults.push(e.content);
          logEvent("tool_result", { ...e });
        });
        bus.on("tools_changed", (e) => logEvent("tools_changed", { ...e }));
        bus.on("extension_event", (e) => logEvent(e.type, e.data));
        bus.on("turn_start", (e) => logEvent("turn_start", { ...e }));
        bus.on("turn_end", (e) => logEvent("turn_end", { ...e }));
      },
    });
    for (const prompt of probe.prompts) await agent.prompt(prompt);
    completed = true;
  } finally {
    await agent?.shutdown();
    events.close();
    if (!completed) run.close("error");
  }
  observation.wire = existsSync(wirePath)
    ? readWireLog(wirePath).map((line) => {
        const message = line.message as { method?: string; params?: unknown };
        return { server: line.server, method: message.method, params: message.params };
      })
    : [];
  observation.skills = skillsObservation(probeSkills.loaded(), diagnostics, workspace.base);
  const failures = checkExpectations(probe.expect, observation);
  run.close(failures.length === 0 ? "passed" : "failed");
  return { probe, runId, dir, records: capture.records, failures, skillDiagnostics: diagnostics };
}
