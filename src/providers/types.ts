/** The nouns every wire API shares: the conversation a runtime holds, and what travels on the wire. */

/** Every wire API a codec reads, in the order help texts and schemas list them. */
export const WIRE_APIS = [
  "openai-completions",
  "anthropic-messages",
  "openai-responses",
  "google-generative-ai",
  "bedrock-converse",
] as const;

export type WireApi = (typeof WIRE_APIS)[number];

export type JsonSchema = Record<string, unknown>;

/** What reaches the provider of a tool: nothing else of a runtime tool travels. */
export interface ToolDefinition {
  name: string;
  description: string;
  parameters: JsonSchema;
}

export interface UserMessage {
  role: "user";
  content: string;
}

export interface ToolCall {
  id: string;
  name: string;
  /** Arguments as the compact JSON text sent on the wire. */
  arguments: string;
}

export interface AssistantMessage {
  role: "assistant";
  text: string;
  toolCalls: ToolCall[];
}

export interface ToolResultMessage {
  role: "tool";
  toolCallId: string;
  toolName: string;
  content: string;
  isError: boolean;
}

export type Message = UserMessage | AssistantMessage | ToolResultMessage;

/** Everything one provider request is built from. */
export interface Context {
  systemPrompt: string;
  /** A second, dynamic system part after the stable prompt (the load_skill model); absent in pi's layout. */
  environment?: string;
  messages: Message[];
  tools: ToolDefinition[];
}

/** Model settings that change the wire body. */
export interface ModelSpec {
  api: WireApi;
  /** `provider/model` as given, e.g. `token-plan/qwen3.8-flash`. */
  ref: string;
  /** The id sent in the body (the part after the provider). */
  id: string;
  baseUrl: string;
  maxTokens: number;
  reasoning: boolean;
}

/** One provider request exactly as it leaves: the body is the serialized JSON the provider receives. */
export interface WireRequest {
  api: WireApi;
  url: string;
  body: string;
  /** `loop` for the agent's turn loop; `sampling` for MCP sampling; `side` for anything else. */
  kind: "loop" | "sampling" | "side";
}

/**
 * Token usage as a response reports it, in one vocabulary for every API. `inputTokens` is every prompt
 * token, cached ones included (Anthropic's own `input_tokens` is only the uncached rest; `raw` keeps it).
 */
export interface Usage {
  /** `provider` for a figure a provider reported; `estimate` for one we made up (a mock's answer). */
  source: "provider" | "estimate";
  inputTokens?: number;
  outputTokens?: number;
  /** Prompt tokens read from the provider's cache. */
  cachedInputTokens?: number;
  /** Prompt tokens written to the cache (Anthropic), and their split by lifetime. */
  cacheWriteTokens?: number;
  cacheWrite5mTokens?: number;
  cacheWrite1hTokens?: number;
  /** The provider's usage object(s) as sent (Anthropic: message_start's merged with message_delta's). */
  raw: Record<string, unknown>;
}

export interface ModelResponse {
  message: AssistantMessage;
  usage?: Usage;
}

/**
 * The raw response stream: the text chunks of an SSE body (or of one JSON body), in arrival order.
 * `usageEstimated`: the server said its usage figures are estimates (the mock), not a provider's count.
 */
export type ResponseStream = AsyncIterable<string> & { usageEstimated?: boolean };

/** The one exit to the model: every provider request leaves through a Transport. */
export type Transport = (request: WireRequest) => Promise<ResponseStream>;

/** What a scripted or mock model answers with, independent of the wire API. */
export type ScriptedReply = (
  | { kind: "text"; text: string }
  | { kind: "tool_calls"; calls: { id: string; name: string; arguments: string }[] }
) & {
  /** Token counts to answer with, in the API's usage shape (a mock's estimate; the runtime sends none). */
  usage?: { inputTokens: number; outputTokens: number };
};

/** Where a request marks a prompt-cache breakpoint (Anthropic `cache_control`): the segment and its block. */
export interface CacheBreakpoint {
  part: "tools" | "system" | "messages";
  /** Index in the dissection's `tools`, `systemParts` or `messages`. */
  index: number;
  /** Index of the content block inside a message that carries the marker; absent for a tool or a system part. */
  block?: number;
  /** The marker's `ttl` (`5m` when absent, as Anthropic's default). */
  ttl: string;
}

/** A wire body taken apart into the pieces capture and analysis measure, in cache order. */
export interface WireDissection {
  model: string;
  /**
   * Each tool definition as the exact JSON text it has inside the body. `prefixJson`, when present,
   * is that JSON without cache breakpoint markers: moving a marker does not change what a provider's
   * prefix cache matches (Anthropic, "Prompt caching"), so prefix analysis compares this text.
   * `deferred`: sent for a tool search to load (`defer_loading: true`), not shown to the model up
   * front. Tools come from wherever the API carries them (`wire-tools.ts`).
   */
  tools: { name: string; json: string; prefixJson?: string; deferred?: true }[];
  /**
   * The JSON text of the body's tool definitions: its tools value (`[...]`), or null when the key is
   * absent; where input items carry tools too (Responses `additional_tools`), one array of all of them.
   */
  toolsJson: string | null;
  /** System / developer texts, in order. */
  systemParts: string[];
  /** Every message but the system ones, in order: role, its exact JSON text, and its plain text. */
  messages: { role: string; json: string; text: string; prefixJson?: string }[];
  /** Roles of all messages, system first. */
  roles: string[];
  /** Anthropic `cache_control` markers in cache order (tools, system, messages); empty or absent for other APIs. */
  cacheBreakpoints?: CacheBreakpoint[];
  /** Gemini: the explicit cache the request reads (`cachedContent: "cachedContents/…"`), absent when none. */
  cachedContent?: string;
  /** Gemini: the exact JSON text of `generationConfig`, absent when the body has none. */
  settingsJson?: string;
  /**
   * What the body says of the conversation it belongs to: Codex's and pi's `prompt_cache_key`, the
   * Responses `previous_response_id`, Claude Code's session id in `metadata.user_id`. Absent when none.
   */
  conversationKeys?: ConversationKeys;
  /**
   * The request asks for an answer shaped by a JSON schema (Anthropic `output_config.format`, chat
   * completions' `response_format`, Responses' `text.format`, Gemini's `responseJsonSchema` or
   * `responseSchema`): the way agents ask for a session title or a routing verdict.
   */
  schemaAnswer?: true;
  /**
   * Anthropic: the settings whose change leaves tools and system readable from the cache but not the
   * messages (`tool_choice`, `thinking`, whether the prompt holds images), as one comparable text.
   */
  messageCacheSettings?: string;
}

/** The conversation signals a body carries (see WireDissection.conversationKeys). */
export interface ConversationKeys {
  promptCacheKey?: string;
  previousResponseId?: string;
  session?: string;
}

/** A scripted reply rendered as a provider sends it: SSE chunks, or one JSON body when streaming was off. */
export interface RenderedReply {
  streamed: boolean;
  chunks: string[];
}

/** One module per wire API, all with these few functions. */
export interface Codec {
  api: WireApi;
  buildRequest(model: ModelSpec, context: Context, kind: WireRequest["kind"]): WireRequest;
  /** Read a streamed (SSE) or a non-streamed (one JSON body) response. */
  parseStream(stream: ResponseStream): Promise<ModelResponse>;
  /**
   * Render a reply as a provider of this API answers `requestBody`: SSE when it asks to stream, else
   * JSON. `url` is the request's (Gemini names the model and the stream form there).
   */
  renderReply(reply: ScriptedReply, requestBody: string, url?: string): RenderedReply;
  /** Take a body apart; `url`, when known, is the request's (Gemini's model is in its path). */
  dissect(body: string, url?: string): WireDissection;
}
