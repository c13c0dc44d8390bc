/**
 * A probe on the real pi: the same workspace, skills, MCP config, cache state and stub servers as the
 * runtime's run, pi in print mode against the project's mock (the same script), every request captured
 * to `runs/<probe>@pi/`, and the probe's expect block (with its `pi:` overrides) checked against what
 * can be observed from outside pi.
 */
import { spawn } from "node:child_process";
import { rmSync, symlinkSync } from "node:fs";
import { findPi, installHint, type PiInstall } from "../agents/pi-install.js";
import { type MockServer, startMockServer } from "../capture/mock-server.js";
import { liveRunDir } from "../capture/run-folder.js";
import { runFiles } from "../capture/run-format.js";
import { UserError } from "../errors.js";
import { piRunName } from "../files/safe-path.js";
import { codecFor } from "../providers/codecs.js";
import { WIRE_LOG_ENV } from "../stub-mcp/wire-log.js";
import { checkExpectations } from "./expect.js";
import { checkProbeLimits } from "./limits.js";
import { providerAndModel, writePiAgentDir } from "./pi-agent-dir.js";
import { PROBE_MODEL_EVENT, probeModelEvent } from "./price-as.js";
import { setUpMcpCache } from "./prime-cache.js";
import { probeEnvironment } from "./probe-env.js";
import { skillFiles, stageAndFindSkills } from "./probe-skills.js";
import { type RunOptions, type RunPlace, type RunResult, runPlace } from "./run-options.js";
import { substituteSkillPaths } from "./script-placeholders.js";
import type { Probe, ProbeExpect } from "./types.js";
import { wireLinesNow, wireObservation } from "./wire-observation.js";
import { inFreshWorkspace, type Workspace } from "./workspace.js";

/** A run on pi that did not finish in this time is stopped (with everything it started). */
const PI_TIMEOUT_MS = 180_000;

/** Why pi cannot run this probe as written, or undefined when it can. */
export function piCannotRun(probe: Probe): string | undefined {
  if (probe.model.api !== "openai-completions")
    return `it speaks ${probe.model.api}; pi runs against the mock's chat completions endpoint only`;
  if (probe.agent.skillMode === "load_skill")
    return "its load_skill model is payload-probe's own skills extension, which pi does not have";
  if (probe.model.sampling.length > 0)
    return "it scripts MCP sampling apart from the loop, and over HTTP the mock cannot tell a nested request from a turn";
  return undefined;
}

/** pi's command line for the probe: print mode, JSON events, no session, no context files, the probe's flags. */
function piArguments(probe: Probe, install: PiInstall, skillPaths: string[]): string[] {
  const { provider, model } = providerAndModel(probe.model.id);
  const args = ["-p", "--mode", "json", "--no-session", "-nc", "--no-prompt-templates", "--no-themes", "--offline"];
  args.push("--thinking", "off", "--model", `${provider}/${model}`);
  args.push("--no-extensions");
  if (probe.agent.mcp) args.push("-e", install.mcpAdapter);
  if (probe.agent.noSkills) args.push("--no-skills");
  for (const path of skillPaths) args.push("--skill", path);
  if (probe.agent.noTools) args.push("--no-tools");
  if (probe.agent.noBuiltinTools) args.push("--no-builtin-tools");
  if (probe.agent.tools) args.push("--tools", probe.agent.tools.join(","));
  if (probe.agent.excludeTools) args.push("--exclude-tools", probe.agent.excludeTools.join(","));
  if (probe.agent.trusted) args.push("-a");
  return [...args, "--", ...probe.prompts];
}

/**
 * pi sees only what it needs: the probe's environment (PATH for the stub servers' `node`, a throwaway
 * HOME), its agent and package dirs, no network start-up work; nothing else of the caller's environment.
 */
function piEnvironment(workspace: Workspace, wirePath: string, exclusive: boolean): NodeJS.ProcessEnv {
  return {
    ...probeEnvironment(workspace.home),
    PI_CODING_AGENT_DIR: workspace.agentDir,
    PI_PACKAGE_DIR: workspace.packageDir,
    PI_OFFLINE: "1",
    PI_TELEMETRY: "0",
    PI_SKIP_VERSION_CHECK: "1",
    [WIRE_LOG_ENV]: wirePath,
    ...(exclusive ? { PI_MCP_CONFIG_MODE: "exclusive" } : {}),
  };
}

interface PiExit {
  code: number | null;
  stderr: string;
}

/** Runs pi to its end; each JSON event line of its stdout goes to `onEvent`. */
function runPi(
  install: PiInstall,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  onEvent: (event: Record<string, unknown>) => void,
): Promise<PiExit> {
  return new Promise((resolve, reject) => {
    const child = spawn(install.program, [...install.programArgs, ...args], {
      cwd,
      env,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    let stderr = "";
    let pending = "";
    child.stdout.on("data", (chunk: Buffer) => {
      pending += chunk.toString("utf8");
      const lines = pending.split("\n");
      pending = lines.pop() ?? "";
      for (const line of lines) {
        if (!line.startsWith("{")) continue;
        try {
          onEvent(JSON.parse(line) as Record<string, unknown>);
        } catch {
          /* a line of pi's own text output, not an event */
        }
      }
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString("utf8")).slice(-8192);
    });
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        /* already gone */
      }
    }, PI_TIMEOUT_MS);
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

/** A tool result's text as a later request carries it: its text blocks joined by newlines. */
function resultText(result: unknown): string {
  const content = (result as { content?: { type?: string; text?: string }[] } | undefined)?.content ?? [];
  return content
    .filter((block) => block.type === "text")
    .map((block) => block.text ?? "")
    .join("\n");
}

/**
 * The probe's expect block as it applies to pi: `pi.expect` replaces what it states (see the schema),
 * and what cannot be seen from outside pi (its registry and active set, its skill discovery) is not checked.
 */
export function piExpect(probe: Probe): ProbeExpect {
  const base = probe.expect;
  const over = probe.pi?.expect;
  if (!over) return { ...base, surface: {}, skills: undefined };
  return {
    ...base,
    requests: over.requests ?? base.requests,
    each: { ...base.each, ...over.each },
    constant: over.constant ?? base.constant,
    systemDelta: over.systemDelta ?? base.systemDelta,
    toolResults: { ...base.toolResults, ...over.toolResults },
    wire: { ...base.wire, ...over.wire },
    surface: {},
    skills: undefined,
  };
}

/**
 * pi given every prompt (print mode takes them in order, as one session); its tool calls and results
 * are stored with the mock's run (events.jsonl and the database, secrets replaced as in its bodies),
 * each with the seq of the request it precedes. Returns the tool results' texts.
 */
async function conversePi(
  probe: Probe,
  install: PiInstall,
  workspace: Workspace,
  env: NodeJS.ProcessEnv,
  mock: Pick<MockServer, "records" | "addEvent">,
  skillPaths: PiRun["skillPaths"],
): Promise<{ toolResults: string[]; failure?: string }> {
  const toolResults: string[] = [];
  const log = (type: string, data: Record<string, unknown>) => mock.addEvent(type, data, mock.records.length + 1);
  const exit = await runPi(install, piArguments(probe, install, skillPaths), workspace.cwd, env, (event) => {
    if (event.type === "tool_execution_start")
      log("tool_call", { id: event.toolCallId, name: event.toolName, arguments: event.args });
    if (event.type === "tool_execution_end") {
      const content = resultText(event.result);
      toolResults.push(content);
      log("tool_result", { id: event.toolCallId, name: event.toolName, isError: event.isError, content });
    }
  });
  if (exit.code === 0) return { toolResults };
  // Like a scripted model running out in the runtime, a pi that stops with an error fails the probe.
  const tail = exit.stderr.trim().split("\n").slice(-5).join(" — ");
  return { toolResults, failure: `pi exited with ${exit.code ?? "a signal"}${tail ? `: ${tail}` : ""}` };
}

function skippedResult(probe: Probe, reason: string): RunResult {
  return {
    probe,
    runId: "",
    dir: "",
    records: [],
    failures: [],
    skillDiagnostics: [],
    skipped: reason,
    agent: "pi",
  };
}

/** The installed pi, or bad input saying how to install it. */
export function requirePi(): PiInstall {
  const install = findPi();
  if (!install) throw new UserError(`the real pi is not installed; ${installHint()}`);
  return install;
}

/** One probe on the real pi; a probe pi cannot express is returned as skipped, with the reason. */
export async function runProbeOnPi(probe: Probe, options: RunOptions = {}, install = requirePi()): Promise<RunResult> {
  const cannot = piCannotRun(probe) ?? probe.pi?.skip;
  if (cannot) return skippedResult(probe, cannot);
  const place = runPlace(options);
  checkProbeLimits(probe, place.limits);
  const runName = piRunName(probe.name);
  return inFreshWorkspace(probe, place, { onWait: options.onWait, runName }, async (workspace, folderLock) => {
    // pi's prompt names PI_PACKAGE_DIR in its docs paths: the workspace's `pkg`, as for the runtime, linking to pi's package.
    rmSync(workspace.packageDir, { recursive: true });
    symlinkSync(install.packageDir, workspace.packageDir);
    const staged = stageAndFindSkills(probe, workspace);
    const skillPaths = staged?.paths ?? [];
    const wirePath = runFiles(liveRunDir(place.runsDir, runName)).mcpWire;
    const seen = { wireLinesBefore: [] as number[], systemTexts: [] as string[] };
    const codec = codecFor(probe.model.api);
    const mock = await startMockServer(
      {
        name: probe.name,
        markers: probe.markers,
        script: substituteSkillPaths(probe.model.script, skillFiles(staged), probe.file),
      },
      {
        runsDir: place.runsDir,
        runName,
        folderLock,
        keepRecords: true,
        keepSecrets: options.keepSecrets,
        database: options.database,
        capture: { pathAlias: place.pathAlias },
        onRequest: (body) => {
          seen.wireLinesBefore.push(wireLinesNow(wirePath));
          seen.systemTexts.push(codec.dissect(body).systemParts.join("\n"));
        },
      },
    );
    // Recorded first, so the run is priced as the probe says wherever the probe file is kept.
    mock.addEvent(PROBE_MODEL_EVENT, { ...probeModelEvent(probe) }, 1);
    try {
      return await observePi({ probe, install, place, workspace, mock, wirePath, skillPaths }, seen);
    } catch (error) {
      await mock.close("error");
      throw error;
    }
  });
}

interface PiRun {
  probe: Probe;
  install: PiInstall;
  place: RunPlace;
  workspace: Workspace;
  mock: MockServer;
  wirePath: string;
  skillPaths: string[];
}

/** pi's agent dir and MCP state, the conversation, then the expect verdict; the run is closed with it. */
async function observePi(run: PiRun, seen: { wireLinesBefore: number[]; systemTexts: string[] }): Promise<RunResult> {
  const { probe, workspace, mock, place } = run;
  const { mcpConfig } = writePiAgentDir(probe, workspace.agentDir, mock.baseUrl);
  // The cache as the probe asks, for the config pi reads (pi's own copy of the probe's), outside the capture.
  if (mcpConfig) await setUpMcpCache(probe.agent.mcp!.cache, mcpConfig, workspace, place.root);
  const env = piEnvironment(workspace, run.wirePath, probe.agent.mcp?.exclusive ?? false);
  const { toolResults, failure } = await conversePi(probe, run.install, workspace, env, mock, run.skillPaths);
  const records = mock.records;
  const failures = failure ? [failure] : [];
  failures.push(
    ...checkExpectations(piExpect(probe), {
      records,
      toolResults,
      surfaces: [],
      wire: wireObservation(run.wirePath),
      ...seen,
    }),
  );
  await mock.close(failures.length === 0 ? "passed" : "failed");
  return { probe, runId: mock.runId, dir: mock.dir, records, failures, skillDiagnostics: [], agent: "pi" };
}
