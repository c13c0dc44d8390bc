/**
 * Answers a server's `sampling/createMessage` with one nested, text-only model request. What that
 * cannot honour — tools, a tool choice, stop sequences, context from other servers — is refused
 * with an invalid-params error naming the fields, rather than answered as if it had been honoured.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CreateMessageRequest } from "@modelcontextprotocol/sdk/types.js";
import type { ClientSdk } from "./client-sdk.js";

export type SamplingHandler = (request: {
  systemPrompt?: string;
  messages: { role: "user" | "assistant"; text: string }[];
  maxTokens?: number;
}) => Promise<string>;

/** The model name the sampling result reports. */
const SAMPLING_MODEL = "payload-probe";

export function installSamplingHandler(
  client: Client,
  { CreateMessageRequestSchema, ErrorCode }: ClientSdk,
  server: string,
  handler: SamplingHandler,
  log: (type: string, data: Record<string, unknown>) => void,
): void {
  client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
    const params = request.params;
    const refused = refusedFields(params);
    if (refused.length > 0) {
      log("mcp_sampling_refused", { server, fields: refused });
      // A plain error with a code: the SDK sends `code` and `message` as they are (an McpError would prefix its message).
      throw Object.assign(
        new Error(`sampling/createMessage: ${refused.join(", ")} not supported (text-only completions without tools)`),
        {
          code: ErrorCode.InvalidParams,
        },
      );
    }
    const messages = params.messages.map((m) => ({
      role: m.role,
      text: (Array.isArray(m.content) ? m.content : [m.content])
        .map((c) => (c.type === "text" ? c.text : ""))
        .join("\n"),
    }));
    log("mcp_sampling", { server, messages: messages.length });
    const text = await handler({ systemPrompt: params.systemPrompt, messages, maxTokens: params.maxTokens });
    return { role: "assistant", content: { type: "text", text }, model: SAMPLING_MODEL, stopReason: "endTurn" };
  });
}

function refusedFields(params: CreateMessageRequest["params"]): string[] {
  const refused: string[] = [];
  if (params.tools) refused.push("tools");
  if (params.toolChoice) refused.push("toolChoice");
  if (params.stopSequences) refused.push("stopSequences");
  if (params.includeContext && params.includeContext !== "none")
    refused.push(`includeContext "${params.includeContext}"`);
  return refused;
}
