/** How each known agent is pointed at the capture proxy (the record command's table of agents). */

/** Base URLs as each provider's SDKs take them: anthropic `<proxy>/anthropic`, openai `<proxy>/openai/v1`, gemini `<proxy>/gemini`. */
export interface ProxyBases {
  anthropic: string;
  openai: string;
  gemini: string;
}

export interface PointerContext {
  bases: ProxyBases;
  /** A private folder of this session, removed after it: temporary config files go here. */
  tempDir: string;
  /** The user's environment, read-only. */
  env: NodeJS.ProcessEnv;
}

export interface AgentPointer {
  agent: string;
  api: string;
  /** The environment variables to set; may write files only under tempDir. */
  point(ctx: PointerContext): Record<string, string>;
}

export const AGENT_POINTERS: AgentPointer[] = [];
