/**
 * The one place a probe is sent to an agent: payload-probe's runtime in process, or the real pi
 * against the mock. `run` and `check` both go through here, so the choice is made in one place.
 * pi-runner (with the mock server and node:http) is loaded only for a run on pi, keeping node:http
 * out of a runtime run's start.
 */
import type { PiInstall } from "../agents/pi-install.js";
import type { RunOptions, RunResult } from "./run-options.js";
import { runProbe } from "./runner.js";
import type { Probe, ProbeAgent } from "./types.js";

export type AgentKind = ProbeAgent["kind"];

/** The agent a probe runs on: the one chosen (`--agent`), else the probe's own `agent.kind`. */
export const agentOf = (probe: Probe, chosen?: AgentKind): AgentKind => chosen ?? probe.agent.kind;

/**
 * The installed pi when any of `agents` is pi, found once before the first run so a missing pi is
 * one line of bad input rather than a failure per probe; undefined when no run needs it.
 */
export async function piFor(agents: readonly AgentKind[]): Promise<PiInstall | undefined> {
  return agents.includes("pi") ? (await import("./pi-runner.js")).requirePi() : undefined;
}

/**
 * One probe on `agent`. For pi, `pi` is the install `piFor` found; without one pi is looked for
 * here (bad input when it is not installed).
 */
export async function runOn(
  agent: AgentKind,
  probe: Probe,
  options: RunOptions = {},
  pi?: PiInstall,
): Promise<RunResult> {
  if (agent === "runtime") return runProbe(probe, options);
  return (await import("./pi-runner.js")).runProbeOnPi(probe, options, pi);
}
