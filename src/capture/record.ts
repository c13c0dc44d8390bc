import { createHash } from "node:crypto";
import type { ModelResponse, WireDissection, WireRequest } from "../providers/types.js";
import { countMarkers } from "./markers.js";
import type { MarkerSpec, PrefixInfo, RequestRecord, TokenCounts } from "./types.js";

export function sha256(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

const bytes = (text: string) => Buffer.byteLength(text, "utf8");

export interface RecordInput {
  run: string;
  probe: string;
  seq: number;
  ts: string;
  durationMs: number;
  request: WireRequest;
  dissection: WireDissection;
  response: ModelResponse | null;
  markers: Record<string, MarkerSpec>;
  prefix: PrefixInfo | null;
  tokens: TokenCounts | null;
}

function deferredTools(d: WireDissection): Pick<RequestRecord, "deferredTools"> {
  const names = d.tools.filter((t) => t.deferred).map((t) => t.name);
  return names.length > 0 ? { deferredTools: names } : {};
}

/** Everything a record says is derived from the wire body (and the parsed response), nothing else. */
export function buildRecord(input: RecordInput): RequestRecord {
  const d = input.dissection;
  const toolsJson = d.toolsJson ?? "";
  const system = d.systemParts.join("\n");
  const messagesJson = d.messages.map((m) => m.json).join(",");
  const message = input.response?.message;
  return {
    v: 1,
    run: input.run,
    probe: input.probe,
    seq: input.seq,
    kind: input.request.kind,
    ts: input.ts,
    durationMs: input.durationMs,
    api: input.request.api,
    model: d.model,
    tools: d.tools.map((t) => t.name),
    ...deferredTools(d),
    toolsBytes: bytes(toolsJson),
    toolsChars: toolsJson.length,
    systemBytes: bytes(system),
    systemChars: system.length,
    systemParts: d.systemParts.map((part) => ({ bytes: bytes(part), sha256: sha256(part) })),
    messagesBytes: bytes(messagesJson),
    messagesChars: messagesJson.length,
    bodyBytes: bytes(input.request.body),
    bodyChars: input.request.body.length,
    roles: d.roles,
    markers: countMarkers(input.markers, d),
    tokens: input.tokens,
    usage: input.response?.usage ?? null,
    prefix: input.prefix,
    hashes: { tools: sha256(toolsJson), system: sha256(system), body: sha256(input.request.body) },
    response: message
      ? {
          kind: message.toolCalls.length > 0 ? "tool_calls" : "text",
          calls: message.toolCalls.map((c) => c.name),
          text: message.text,
        }
      : null,
  };
}
