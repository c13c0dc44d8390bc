import type { JsonSchema, Message, WireRequest } from "../providers/types.js";

/** What a tool returns to the loop; `content` becomes the tool message's text. */
export interface ToolResult {
  content: string;
  isError?: boolean;
  details?: unknown;
}

export interface ToolContext {
  cwd: string;
  /** The agent's process environment: what a tool's programs inherit, and the HOME `~/` stands for. */
  env: NodeJS.ProcessEnv;
  signal?: AbortSignal;
}

/** A tool as the runtime holds it. Only name, description and parameters ever reach the wire. */
export interface RuntimeTool {
  name: string;
  label?: string;
  description: string;
  parameters: JsonSchema;
  /** The one-line summary for the system prompt's `Available tools`; a tool without one is not listed there. */
  promptSnippet?: string;
  promptGuidelines?: string[];
  execute(args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult>;
}

/** Where a registered tool came from: registry order is built-ins first, then extensions in load order. */
export type ToolSource = "builtin" | "extension";

export interface RuntimeEvents {
  session_start: { cwd: string };
  /** Fired once per provider request, with the exact wire body, before it is sent. */
  before_provider_request: { request: WireRequest; registered: string[]; active: string[] };
  turn_start: { prompt: string };
  turn_end: { text: string };
  tool_call: { id: string; name: string; arguments: string };
  tool_result: { id: string; name: string; content: string; isError: boolean };
  tools_changed: { registered: string[]; active: string[] };
  session_shutdown: Record<string, never>;
  /** Anything an extension wants in the run's event log (MCP connects, cache writes, skill loads). */
  extension_event: { source: string; type: string; data: Record<string, unknown> };
}

export type RuntimeEventName = keyof RuntimeEvents;
export type EventHandler<K extends RuntimeEventName> = (event: RuntimeEvents[K]) => void | Promise<void>;

/** A slash command an extension offers (`/mcp__server__prompt …`): its text becomes a user message. */
export interface SlashCommand {
  name: string;
  description?: string;
  run(args: string): Promise<string>;
}

/** The surface every extension sees, and nothing more: the MCP adapter is written against this alone. */
export interface ExtensionAPI {
  readonly cwd: string;
  readonly agentDir: string;
  readonly flags: Record<string, string | boolean | undefined>;
  registerTool(tool: RuntimeTool): void;
  getAllTools(): {
    name: string;
    description: string;
    parameters: JsonSchema;
    promptGuidelines?: string[];
    source: ToolSource;
  }[];
  getActiveTools(): string[];
  setActiveTools(names: string[]): void;
  registerCommand(command: SlashCommand): void;
  on<K extends RuntimeEventName>(event: K, handler: EventHandler<K>): void;
  emit(type: string, data: Record<string, unknown>): void;
  /** A nested, tool-less model request outside the loop (MCP sampling). Returns the reply text. */
  complete(request: { systemPrompt?: string; messages: Message[]; maxTokens?: number }): Promise<string>;
  getSystemPrompt(): string;
}

/** An extension is a function that receives the API; it may finish its set-up asynchronously. */
export type Extension = (api: ExtensionAPI) => void | Promise<void>;
