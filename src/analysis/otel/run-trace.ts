/**
 * A whole run as one trace: an `invoke_agent` span, one per subagent conversation under it
 * (conversation-spans.ts), a `chat {model}` span per provider request (a subagent's under its own),
 * an `execute_tool` span per tool execution, the MCP requests a stub server received during a
 * tool as that tool's children, and a sampling request under the tool whose MCP server asked for
 * it (gen-ai-agent-spans.md, gen-ai-spans.md "Execute tool span", mcp.md "Client" spans).
 *
 * Times come from the run's files, never from the export: a request starts at its record's `ts` and
 * ends `durationMs` later. Events have no clock of their own, only the seq of the request they
 * precede, so a tool runs from the end of the request before its call to the start of the request
 * after its result; MCP messages carry the time the server received them.
 */

import type { AgentEventRow, RequestRecord } from "../../capture/types.js";
import { roundDollars } from "../cost/money.js";
import { runCacheAttributes } from "./cache-attributes.js";
import { chatSpan, conversationIdOf, providerName, recordEndMs } from "./chat-span.js";
import { conversationParent, planSubagents } from "./conversation-spans.js";
import type { Attributes, PlanOptions, SpanPlan } from "./span-plan.js";

/** The agent events a trace uses (tool calls and results); other types are passed over. */
export interface RunEvent extends AgentEventRow {
  id?: string;
  name?: string;
  arguments?: string;
  content?: string;
  isError?: boolean;
}

/** One mcp-wire.jsonl row: a JSON-RPC message a stub MCP server received, and when. */
export interface WireLine {
  server: string;
  ts: string;
  message: { id?: string | number; method?: string; params?: Record<string, unknown> };
}

export interface RunTraceInput {
  run: string;
  probe: string;
  /** In seq order. */
  records: RequestRecord[];
  /** In the order they were logged. */
  events: RunEvent[];
  wire: WireLine[];
  /** The wire body of request `seq`, for `--content full`: read when its span is sent, in seq order. */
  body?: (seq: number) => string | undefined;
}

export const AGENT_SPAN_ID = "agent";

/** The `invoke_agent` span's own attributes: the agent is the probe's configuration, the conversation the run. */
export function agentAttributes(run: string, probe: string): Attributes {
  return {
    "gen_ai.operation.name": "invoke_agent",
    "gen_ai.agent.name": probe,
    "gen_ai.conversation.id": run,
    "payload_probe.run.id": run,
    "payload_probe.probe": probe,
  };
}

const bytes = (text: string) => Buffer.byteLength(text, "utf8");

interface OpenTool {
  plan: SpanPlan;
  call: RunEvent;
}

function toolAttributes(call: RunEvent, result: RunEvent | undefined, run: string, options: PlanOptions): Attributes {
  const args = call.arguments ?? "";
  const attributes: Attributes = {
    "gen_ai.operation.name": "execute_tool",
    "gen_ai.tool.name": call.name ?? "",
    "gen_ai.tool.call.id": call.id ?? "",
    "gen_ai.tool.type": "function",
    "gen_ai.conversation.id": run,
    "payload_probe.tool.arguments.bytes": bytes(args),
  };
  if (result) attributes["payload_probe.tool.result.bytes"] = bytes(result.content ?? "");
  if (options.content === "full") {
    attributes["gen_ai.tool.call.arguments"] = args;
    if (result) attributes["gen_ai.tool.call.result"] = result.content ?? "";
  }
  if (result?.isError) attributes["error.type"] = "tool_error";
  return attributes;
}

/** Tool spans and chat spans, walking records and events in the order they happened. */
function planConversation(input: RunTraceInput, options: PlanOptions, startMs: number) {
  const tools: SpanPlan[] = [];
  const chats: SpanPlan[] = [];
  const open = new Map<string, OpenTool>();
  let eventIndex = 0;
  let lastEnd = startMs;
  const closeTool = (tool: OpenTool, result: RunEvent | undefined, endMs: number) => {
    tool.plan.endMs = Math.max(tool.plan.startMs, endMs);
    tool.plan.attributes = toolAttributes(tool.call, result, input.run, options);
    if (result?.isError) tool.plan.errorType = "tool_error";
    open.delete(tool.call.id ?? "");
  };
  // Events logged before request N carry seq N: they happened after request N-1 and before request N.
  const takeEvents = (throughSeq: number, nextStartMs: number) => {
    for (; eventIndex < input.events.length && input.events[eventIndex]!.seq <= throughSeq; eventIndex++) {
      const event = input.events[eventIndex]!;
      if (event.type === "tool_call") {
        const plan: SpanPlan = {
          id: `tool:${event.id}:${tools.length}`,
          parent: AGENT_SPAN_ID,
          name: `execute_tool ${event.name}`,
          kind: "internal",
          startMs: lastEnd,
          endMs: lastEnd,
          attributes: {},
        };
        tools.push(plan);
        open.set(event.id ?? "", { plan, call: event });
      } else if (event.type === "tool_result") {
        const tool = open.get(event.id ?? "");
        if (tool) closeTool(tool, event, nextStartMs);
      }
    }
  };
  for (const record of input.records) {
    takeEvents(record.seq, Date.parse(record.ts));
    // A sampling request is made while a tool waits on its MCP server: the tool opened last.
    const within = record.kind === "sampling" ? [...open.values()].at(-1)?.plan.id : undefined;
    const parent = within ?? conversationParent(record, AGENT_SPAN_ID);
    const body = input.body;
    chats.push(chatSpan(record, parent, options, body && (() => body(record.seq))));
    lastEnd = Math.max(lastEnd, recordEndMs(record));
  }
  takeEvents(Number.POSITIVE_INFINITY, lastEnd);
  for (const tool of [...open.values()]) closeTool(tool, undefined, lastEnd);
  return { tools, chats, endMs: lastEnd };
}

/** `{mcp.method.name} {target}` (mcp.md, "Span name"): the tool or prompt a request names, else the method alone. */
function mcpSpanName(method: string, params: Record<string, unknown> | undefined): string {
  const target = params?.name;
  return (method === "tools/call" || method === "prompts/get") && typeof target === "string"
    ? `${method} ${target}`
    : method;
}

/**
 * The MCP requests and notifications the servers received, each under the tool whose window holds
 * it (the one that started last), else under the agent (connections made before the first request,
 * shutdown). The log keeps no reply times, so a span ends with its tool, or where it started.
 */
function planMcp(wire: WireLine[], tools: SpanPlan[]): SpanPlan[] {
  const spans: SpanPlan[] = [];
  for (const [index, line] of wire.entries()) {
    const method = line.message.method;
    if (!method) continue;
    const at = Date.parse(line.ts);
    const tool = tools.filter((t) => t.startMs <= at && at <= t.endMs).at(-1);
    const attributes: Attributes = { "mcp.method.name": method, "payload_probe.mcp.server": line.server };
    if (line.message.id !== undefined) attributes["jsonrpc.request.id"] = String(line.message.id);
    const params = line.message.params;
    if (method === "initialize" && typeof params?.protocolVersion === "string")
      attributes["mcp.protocol.version"] = params.protocolVersion;
    if (method === "tools/call" && typeof params?.name === "string") {
      attributes["gen_ai.operation.name"] = "execute_tool";
      attributes["gen_ai.tool.name"] = params.name;
    }
    spans.push({
      id: `mcp:${index}`,
      parent: tool?.id ?? AGENT_SPAN_ID,
      name: mcpSpanName(method, params),
      kind: "client",
      startMs: at,
      endMs: tool ? tool.endMs : at,
      attributes,
    });
  }
  return spans;
}

/** Every span of a run, each parent before its children (the agent, tools, requests, MCP calls). */
export function planRunTrace(input: RunTraceInput, options: PlanOptions): SpanPlan[] {
  // Servers append to the wire log from their own processes, so its rows need not be in time order.
  const wireTimes = input.wire.map((line) => Date.parse(line.ts));
  const firstWire = Math.min(...wireTimes);
  const firstRecord = input.records.length > 0 ? Date.parse(input.records[0]!.ts) : Number.POSITIVE_INFINITY;
  const startMs = Math.min(firstWire, firstRecord);
  if (!Number.isFinite(startMs)) return [];
  const { tools, chats, endMs } = planConversation(input, options, startMs);
  const mcp = planMcp(input.wire, tools);
  const attributes = agentAttributes(input.run, input.probe);
  // The run's agent is its main conversation, where the records tell conversations apart.
  const main = input.records.find((r) => r.conversation?.role === "main");
  if (main) attributes["gen_ai.conversation.id"] = conversationIdOf(main);
  const first = input.records.find((r) => r.kind === "loop") ?? input.records[0];
  if (first) {
    attributes["gen_ai.provider.name"] = providerName(first.api);
    attributes["gen_ai.request.model"] = first.model;
  }
  attributes["payload_probe.requests"] = input.records.length;
  const costs = chats.map((c) => c.attributes["payload_probe.cost.predicted_usd"]).filter((c) => c !== undefined);
  if (costs.length > 0)
    // The run's total, rounded as every output shows dollars (money.ts).
    attributes["payload_probe.cost.predicted_usd"] = roundDollars(
      costs.reduce<number>((sum, c) => sum + (c as number), 0),
    );
  Object.assign(attributes, runCacheAttributes(chats.map((c) => c.attributes)));
  const agent: SpanPlan = {
    id: AGENT_SPAN_ID,
    parent: null,
    name: `invoke_agent ${input.probe}`,
    kind: "internal",
    startMs,
    endMs: Math.max(endMs, ...wireTimes),
    attributes,
  };
  return [agent, ...planSubagents(input.records, chats, AGENT_SPAN_ID), ...tools, ...chats, ...mcp];
}
