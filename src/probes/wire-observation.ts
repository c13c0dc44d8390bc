/**
 * The stub MCP servers' wire log as a probe's expect block reads it, the same for a run on the
 * runtime and on pi: both point the servers at the run's `mcp-wire.jsonl`.
 */
import { existsSync } from "node:fs";
import { countJsonlRows } from "../files/jsonl.js";
import { readWireLog } from "../stub-mcp/wire-log.js";
import type { RunObservation } from "./expect.js";

/** Lines written so far, taken as each request is sent (`wire.firstMessageBefore`); 0 before the first. */
export const wireLinesNow = (wirePath: string): number => (existsSync(wirePath) ? countJsonlRows(wirePath) : 0);

/** What the stub servers received, after the run. */
export function wireObservation(wirePath: string): RunObservation["wire"] {
  if (!existsSync(wirePath)) return [];
  return readWireLog(wirePath).map((line) => {
    const message = line.message as { method?: string; params?: unknown };
    return { server: line.server, method: message.method, params: message.params };
  });
}
