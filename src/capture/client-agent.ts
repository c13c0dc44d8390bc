/**
 * Which program sent a request, from its `user-agent` header: the agent CLIs name themselves there
 * (Claude Code `claude-cli/2.1.328 (external, cli)`, Codex `codex_exec/0.169.0 (…)` or its other
 * originators, Gemini CLI `GeminiCLI/…` or, at 0.61, `GeminiCLI-tui/…`, pi `pi (linux …)`), and the official SDKs
 * name their language (`Anthropic/JS 0.x`, `OpenAI/Python 1.x`, `google-genai-sdk/1.x gl-node/20`).
 * Only the name is kept: `runs` shows it as what made the run. Anything else is the header's first
 * product name, when it is a plain word (`curl`).
 */

const KNOWN: [RegExp, string][] = [
  [/^claude-cli\//i, "claude-code"],
  [/^codex[_-]/i, "codex"],
  [/^GeminiCLI[-/]/, "gemini-cli"],
  [/^pi \(/, "pi"],
  [/^opencode\//i, "opencode"],
  [/^(Anthropic|OpenAI)\/JS\b|\bgl-node\//, "sdk/node"],
  [/^(Anthropic|OpenAI)\/Python\b|\bgl-python\//, "sdk/python"],
];

const PRODUCT = /^([A-Za-z][A-Za-z0-9._-]{0,30})(?:\/|\s|$)/;

/** The agent named by a `user-agent` value; undefined when there is none or it names nothing plain. */
export function agentOfUserAgent(value: string | undefined): string | undefined {
  if (value === undefined || value === "") return undefined;
  for (const [pattern, agent] of KNOWN) if (pattern.test(value)) return agent;
  return PRODUCT.exec(value)?.[1]?.toLowerCase();
}

/** `{ agent }` for a request's headers, else nothing: spread into what is handed to the capture. */
export function agentOf(headers: Record<string, string | string[] | undefined>): { agent?: string } {
  const value = headers["user-agent"];
  const agent = agentOfUserAgent(typeof value === "string" ? value : undefined);
  return agent === undefined ? {} : { agent };
}
