/**
 * A scripted call to a tool the model was not offered: the runtime answers `Tool … not found`, which a
 * probe's expectations may never look at, so the probe itself fails, naming the tool and what hid it.
 */
import type { EventBus } from "../runtime/events.js";
import type { Probe } from "./types.js";

interface Surface {
  registered: string[];
  active: string[];
}

/** Watches the agent's tool calls against the active set of the request that made each; the findings go into `found`. */
export function watchHiddenToolCalls(bus: EventBus, probe: Probe, surfaces: Surface[], found: string[]): void {
  bus.on("tool_call", ({ name }) => {
    const surface = surfaces.at(-1);
    if (!surface || surface.active.includes(name)) return;
    found.push(
      `request ${surfaces.length}: model.script calls ${name}, which is not active: ${whatHid(name, probe, surface)}`,
    );
  });
}

/** Why a tool is not in the active set, in the probe's own terms where it has them. */
function whatHid(name: string, probe: Probe, surface: Surface): string {
  const { agent } = probe;
  if (agent.noTools) return "agent.noTools sends no tools";
  if (agent.excludeTools?.includes(name)) return "agent.excludeTools names it";
  // The allowlist decides what is registered as well as what is active (pi's --tools).
  if (agent.tools && !agent.tools.includes(name)) return `agent.tools [${agent.tools.join(", ")}] leaves it out`;
  if (surface.registered.includes(name)) return "it is registered but was not activated before this request";
  return agent.mcp
    ? "no tool of that name is registered (an MCP tool is <server>_<tool> with directTools on, else reached through mcp)"
    : "no tool of that name is registered";
}
