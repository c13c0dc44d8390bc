import { appendJsonl, jsonlRows } from "../files/jsonl.js";

/** The environment variable naming the file every stub appends its received messages to. */
export const WIRE_LOG_ENV = "PAYLOAD_PROBE_WIRE_LOG";

/** One line of the wire log: a JSON-RPC message as the stub received it. */
export interface WireLogLine {
  server: string;
  ts: string;
  message: unknown;
}

/** Records one received message. */
export type WireLog = (message: unknown) => void;

/**
 * Opens the wire log named by the environment, or a no-op when none is set. Each message is appended
 * synchronously so the log is complete up to the moment a stub crashes on purpose.
 */
export function openWireLog(serverName: string, env: NodeJS.ProcessEnv = process.env): WireLog {
  const path = env[WIRE_LOG_ENV];
  if (!path) return () => {};
  return (message) => {
    const line: WireLogLine = { server: serverName, ts: new Date().toISOString(), message };
    appendJsonl(path, line);
  };
}

/**
 * Reads a wire log back, oldest message first. A stub killed mid-write leaves its last line torn;
 * the messages before it are still what the servers received.
 */
export function readWireLog(path: string): WireLogLine[] {
  return [...jsonlRows(path, isWireLogLine, "a wire log line {server, ts, message}")];
}

function isWireLogLine(value: unknown): value is WireLogLine {
  const line = value as WireLogLine;
  return typeof line === "object" && line !== null && typeof line.server === "string" && "message" in line;
}
