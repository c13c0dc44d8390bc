/** The program a request's `user-agent` names, as `runs` shows it (capture/client-agent.ts). */
import { describe, expect, it } from "vitest";
import { agentOf, agentOfUserAgent } from "../../src/capture/client-agent.js";

describe("agentOfUserAgent", () => {
  it("names each agent CLI and the official SDKs by the user-agent they send", () => {
    const seen = [
      ["claude-cli/2.1.328 (external, cli)", "claude-code"],
      ["codex_exec/0.169.0 (Debian 12.0.0; x86_64) xterm-256color", "codex"],
      ["codex_cli_rs/0.169.0 (Ubuntu 24.4.0; x86_64) WindowsTerminal", "codex"],
      ["GeminiCLI/0.34.0/gemini-2.5-flash (linux; x64)", "gemini-cli"],
      // The Gemini CLI 0.61.0 of agents install names itself GeminiCLI-tui (test/agents/real-agents.test.ts holds it).
      ["GeminiCLI-tui/0.61.0/gemini-3-flash-preview (linux; x64)", "gemini-cli"],
      ["pi (linux 6.8.0; x64)", "pi"],
      ["Anthropic/JS 0.71.2", "sdk/node"],
      ["OpenAI/JS 6.9.1", "sdk/node"],
      ["google-genai-sdk/1.30.0 gl-node/v20.19.0", "sdk/node"],
      ["OpenAI/Python 1.109.1", "sdk/python"],
      ["curl/8.5.0", "curl"],
    ];
    expect(seen.map(([ua]) => [ua, agentOfUserAgent(ua)])).toEqual(seen);
  });

  it("names nothing for no header, an empty one, or one that starts with no plain word", () => {
    expect(agentOfUserAgent(undefined)).toBeUndefined();
    expect(agentOfUserAgent("")).toBeUndefined();
    expect(agentOfUserAgent("(compatible; x)")).toBeUndefined();
    expect(agentOf({})).toEqual({});
    expect(agentOf({ "user-agent": ["a", "b"] })).toEqual({});
    expect(agentOf({ "user-agent": "claude-cli/2.1.328 (external, cli)" })).toEqual({ agent: "claude-code" });
  });
});
