/**
 * The shapes every agent pointer shares (what record hands a pointer, what a pointer gives back), apart
 * from the list in agent-pointers.ts so the pointer modules the list imports can use them.
 */

/** The proxy's base URL per provider, each in the form that provider's SDKs take as their base URL. */
export interface ProxyBases {
  anthropic: string;
  openai: string;
  gemini: string;
  /** Google's Code Assist API (a Gemini CLI signed in with Google), without its version. */
  "code-assist": string;
  /** ChatGPT's backend (Codex signed in with ChatGPT), on the HTTPS listener when there is one. */
  chatgpt: string;
  /** Google Vertex AI, with its `/v1` (Claude Code's ANTHROPIC_VERTEX_BASE_URL takes it so). */
  vertex: string;
}

export interface PointerContext {
  bases: ProxyBases;
  /** A private folder of this record session, removed when it ends: temporary config files go here. */
  tempDir: string;
  /** The user's environment as record was started with it (read-only). */
  env: NodeJS.ProcessEnv;
  /** The folder the command runs in, where an agent finds its project settings. */
  cwd: string;
  /** Codex sends Responses requests as HTTP POSTs rather than over its default WebSocket (`record --codex-http`). */
  codexHttp?: boolean;
  /** The certificate authority (PEM) of the proxy's HTTPS listener, when record started one. */
  authority?: string;
}

export interface AgentPointer {
  /** Who is pointed, as the README table names it ("Claude Code", "openai SDK"). */
  agent: string;
  /** The wire API(s) it will send, in words. */
  api: string;
  /**
   * The program names that run this agent (`codex`): when the command is one, a config of the
   * agent's that cannot be read stops record before anything starts; for any other command it is
   * a warning and the agent is left unpointed.
   */
  programs?: string[];
  /** The variables to set for the command; may write files under ctx.tempDir, never elsewhere. */
  point(ctx: PointerContext): Record<string, string>;
  /** Why, as far as can be seen beforehand, the agent would still not reach the proxy; undefined when nothing says so. */
  caveat?(ctx: PointerContext): string | undefined;
}
