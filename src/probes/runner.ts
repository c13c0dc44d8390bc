/**
 * A probe on payload-probe's own runtime: the agent in process, on the probe's scripted model (or a
 * provider URL), every request through the capture into `runs/<probe>/`, its events observed as
 * they happen and the expect block checked against them. The workspace, the MCP cache and the
 * skills are set up by the modules pi-runner.ts shares; run-on.ts chooses between the two.
 */
import { dirname } from "node:path";
import { type CaptureRun, openCaptureRun } from "../capture/capture-run.js";
import { chainTransport } from "../capture/diagnostics-chain.js";
import { liveRunDir } from "../capture/run-folder.js";
import { runFiles } from "../capture/run-format.js";
import { loadTokenCounter } from "../capture/tokens.js";
import { mcpExtension } from "../mcp/extension.js";
import { mcpTextsSchema } from "../mcp/texts-schema.js";
import type { PidLock } from "../processes/pid-lock.js";
import { CacheDiagnoser, withCacheDiagnosis } from "../providers/cache-diagnoser.js";
import { codecFor } from "../providers/codecs.js";
import { httpTransport } from "../providers/http-transport.js";
import { baseUrlFor, resolveModel } from "../providers/models.js";
import { createScriptedModel } from "../providers/scripted-model.js";
import type { Codec, Transport } from "../providers/types.js";
import { Agent } from "../runtime/agent.js";
import type { EventBus } from "../runtime/events.js";
import { extensionTexts, loadProfile } from "../runtime/load-profile.js";
import type { Profile } from "../runtime/profile.js";
import type { Extension } from "../runtime/types.js";
import { WIRE_LOG_ENV } from "../stub-mcp/wire-log.js";
import { checkExpectations, type RunObservation } from "./expect.js";
import { watchHiddenToolCalls } from "./hidden-tools.js";
import { checkProbeLimits, limitTransport, REQUESTS_PER_PROMPT } from "./limits.js";
import { PROBE_MODEL_EVENT, probeModelEvent } from "./price-as.js";
import { setUpMcpCache } from "./prime-cache.js";
import { probeEnvironment } from "./probe-env.js";
import { type ProbeSkills, runtimeSkills, skillsObservation } from "./probe-skills.js";
import { type RunOptions, type RunPlace, type RunResult, runPlace } from "./run-options.js";
import { substituteSkillPaths } from "./script-placeholders.js";
import type { Probe } from "./types.js";
import { wireLinesNow, wireObservation } from "./wire-observation.js";
import { inFreshWorkspace, type Workspace } from "./workspace.js";

/**
 * The stub servers the probe expects to be connected (its wire expectations name `initialize`):
 * their processes start with the adapter rather than at the first call, off the run's critical path.
 */
const serversExpectedToConnect = (probe: Probe): string[] =>
  Object.entries(probe.expect.wire)
    .filter(([, wire]) => wire.methods?.includes("initialize"))
    .map(([server]) => server);

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
  const cachePath = await setUpMcpCache(mcp.cache, mcp.config, workspace, root);
  return [
    mcpExtension({
      texts: extensionTexts(profile, "mcp", mcpTextsSchema),
      configPath: mcp.config,
      exclusive: mcp.exclusive,
      cachePath,
      home: workspace.home,
      env: { ...probeEnvironment(workspace.home), [WIRE_LOG_ENV]: wirePath },
      // A stdio server starts in its config's folder, from which its command's relative paths are read.
      baseDir: dirname(mcp.config),
      startEarly: serversExpectedToConnect(probe),
    }),
  ];
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
    observation.wireLinesBefore.push(wireLinesNow(wirePath));
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
  /** Scripted calls to tools that were not active, each naming the tool and what hid it. */
  hiddenCalls: string[];
}

/**
 * The scripted model (or a provider over HTTP) behind the capture. With `model.cacheDiagnostics`, the
 * runtime's requests ask for cache diagnostics, chained outside the capture so it records them as the
 * runtime's own fields, and the scripted model answers them as the mock does.
 */
async function probeTransport(c: Conversation, codec: Codec): Promise<Transport> {
  const { probe, place, run } = c;
  const scripted = (): Transport =>
    createScriptedModel(codec, {
      loop: substituteSkillPaths(probe.model.script, c.skills.paths, probe.file),
      sampling: probe.model.sampling,
    });
  if (!probe.model.cacheDiagnostics)
    return run.capture.wrap(place.providerUrl === undefined ? scripted() : httpTransport());
  const counter = await loadTokenCounter();
  const answered =
    place.providerUrl === undefined
      ? withCacheDiagnosis(
          scripted(),
          new CacheDiagnoser(codecFor, async (use) => use((text) => counter.countText(text))),
        )
      : httpTransport();
  return chainTransport(run.capture.wrap(answered));
}

/** The agent on the scripted model, through the capture and the run's limits, given every prompt in turn. */
async function converse(c: Conversation, observation: RunObservation): Promise<void> {
  const { probe, place, run } = c;
  const log = (type: string, data: Record<string, unknown>) => run.capture.addEvent(type, data);
  const codec = codecFor(probe.model.api);
  let agent: Agent | undefined;
  try {
    agent = await Agent.create({
      profile: c.profile,
      cwd: probe.agent.cwd ?? c.workspace.cwd,
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
      transport: limitTransport(await probeTransport(c, codec), place.limits, probe.file),
      filter: { allow: probe.agent.tools, deny: probe.agent.excludeTools, noBuiltinTools: probe.agent.noBuiltinTools },
      noTools: probe.agent.noTools,
      skills: c.skills.hook,
      extensions: c.skills.extension ? [...c.extensions, c.skills.extension] : c.extensions,
      toolSnapshot: probe.agent.skillMode === "load_skill" ? "per-run" : "per-request",
      maxRequestsPerPrompt: REQUESTS_PER_PROMPT,
      observe: (bus) => {
        observeAgent(bus, observation, log, c.wirePath);
        watchHiddenToolCalls(bus, probe, observation.surfaces, c.hiddenCalls);
      },
    });
    for (const prompt of probe.prompts) await agent.prompt(prompt);
  } finally {
    await agent?.shutdown();
  }
}

/** After the agent has shut down: what the stub servers received, the skills outcome, the expect verdict. */
function finish(c: Conversation, observation: RunObservation): RunResult {
  observation.wire = wireObservation(c.wirePath);
  observation.skills = skillsObservation(c.skills.loaded(), c.skills.diagnostics, c.workspace.base);
  const failures = [...c.hiddenCalls, ...checkExpectations(c.probe.expect, observation)];
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
  const profile = loadProfile(probe.agent.profile);
  // Named before the run opens (the MCP servers are configured first): the run's live folder, swapped in at close.
  const wirePath = runFiles(liveRunDir(place.runsDir, probe.name)).mcpWire;
  const extensions = await mcpExtensions(probe, profile, workspace, place.root, wirePath);
  const run = openCaptureRun({
    name: probe.name,
    runsDir: place.runsDir,
    markers: probe.markers,
    pathAlias: place.pathAlias,
    ...capture,
  });
  // Recorded first, so the run is priced as the probe says wherever the probe file is kept.
  run.capture.addEvent(PROBE_MODEL_EVENT, { ...probeModelEvent(probe) });
  const skills = runtimeSkills(profile, probe, workspace);
  return { probe, place, profile, workspace, extensions, skills, run, wirePath, hiddenCalls: [] };
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
  return inFreshWorkspace(probe, place, { onWait: options.onWait }, async (workspace, folderLock) => {
    const conversation = await buildConversation(probe, place, workspace, {
      database: options.database,
      keepSecrets: options.keepSecrets,
      folderLock,
    });
    return finish(conversation, await observe(conversation));
  });
}
