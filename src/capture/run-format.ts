/**
 * The run format's one owner: the names of the files a run folder holds. Every writer (the capture,
 * the probe runners) and every reader (analysis, view, otel) names them through here, so a rename or a
 * new file is one edit; tests that write fixture runs keep the literals, as they describe the format
 * from outside.
 */
import { join } from "node:path";

/** One record per captured request (src/capture/record.ts). */
export const REQUESTS_FILE = "requests.jsonl";
/** The wire bodies, one row per request or side exchange. */
export const PAYLOADS_FILE = "payloads.jsonl";
/** Agent events (tool calls and results), each with the seq of the request it precedes. */
export const EVENTS_FILE = "events.jsonl";
/** The JSON-RPC messages the stub MCP servers received. */
export const MCP_WIRE_FILE = "mcp-wire.jsonl";

/** What a run folder holds: the files a capture and the probe runner write, nothing else. */
export const RUN_FOLDER_FILES = [REQUESTS_FILE, PAYLOADS_FILE, EVENTS_FILE, MCP_WIRE_FILE] as const;

/** The paths of a run folder's files. */
export interface RunFiles {
  requests: string;
  payloads: string;
  events: string;
  mcpWire: string;
}

export function runFiles(dir: string): RunFiles {
  return {
    requests: join(dir, REQUESTS_FILE),
    payloads: join(dir, PAYLOADS_FILE),
    events: join(dir, EVENTS_FILE),
    mcpWire: join(dir, MCP_WIRE_FILE),
  };
}
