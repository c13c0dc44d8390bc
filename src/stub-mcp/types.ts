/** The stub servers' nouns: what a fixture file declares and how a tool may misbehave on purpose. */

/**
 * How a fixture tool misbehaves when called; absent means it answers normally. `hang` never answers
 * the call but keeps serving; `block` stops the server's only thread for good, so the process lives on
 * and answers nothing, pings included.
 */
export type ToolFault = "crash" | "hang" | "block" | "garbage" | "error";
export const TOOL_FAULTS: readonly ToolFault[] = ["crash", "hang", "block", "garbage", "error"];

export interface StubTool {
  name: string;
  description?: string;
  /** Sent in tools/list exactly as written in the fixture. */
  inputSchema: Record<string, unknown>;
  /** Result text template: `{arg}` is that call argument, `{args}` the compact JSON of all arguments. */
  result?: string;
  /**
   * When set, the call asks the client for sampling/createMessage with this prompt (a template too);
   * `request` holds further createMessage params sent as written (e.g. `stopSequences`, `tools`).
   */
  sampling?: { prompt: string; request?: Record<string, unknown> };
  fault?: ToolFault;
  /** Calling this tool adds that tool to the server's list and sends `notifications/tools/list_changed` before answering. */
  addsTool?: StubTool;
  /** Calling this tool removes the named tool from the server's list and notifies, before answering. */
  removesTool?: string;
}

export interface StubResource {
  uri: string;
  name: string;
  description?: string;
  text: string;
}

export interface StubPromptArgument {
  name: string;
  description?: string;
  required?: boolean;
}

export interface StubPromptMessage {
  role: "user" | "assistant";
  /** A template filled from the prompt's arguments. */
  text: string;
}

export interface StubPrompt {
  name: string;
  description?: string;
  arguments?: StubPromptArgument[];
  messages: StubPromptMessage[];
}

/** One `fixtures/stub-servers/<x>.json` file. */
export interface StubFixture {
  name: string;
  instructions?: string;
  tools: StubTool[];
  resources?: StubResource[];
  prompts?: StubPrompt[];
  /** Extra top-level keys of every tools/list result, as written (e.g. the cache hint `ttlMs`). */
  toolsListExtra?: Record<string, unknown>;
  /** `delayMs` after the client's `notifications/initialized`, add `tool` and send `notifications/tools/list_changed`. */
  addsToolAfterInit?: { delayMs: number; tool: StubTool };
}

/** A tool as tools/list shows it. */
export interface ListedTool {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
}

/** A tools/call result holding one text block. */
export interface TextToolResult {
  [key: string]: unknown;
  content: { type: "text"; text: string }[];
  isError: boolean;
}
