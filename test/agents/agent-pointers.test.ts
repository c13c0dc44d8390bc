import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import {
  AGENT_POINTERS,
  pointerCaveats,
  pointerVariables,
  recordEnvironment,
} from "../../src/agents/agent-pointers.js";
import type { AgentPointer, PointerContext } from "../../src/agents/pointer-types.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";

afterEach(removeTempDirs);

const bases = {
  anthropic: "http://127.0.0.1:9/anthropic",
  openai: "http://127.0.0.1:9/openai/v1",
  gemini: "http://127.0.0.1:9/gemini",
  "code-assist": "http://127.0.0.1:9/code-assist",
  chatgpt: "https://127.0.0.1:10/backend-api",
  vertex: "http://127.0.0.1:9/vertex/v1",
};
const context = (env: NodeJS.ProcessEnv = {}, cwd = "/nonexistent"): PointerContext => ({
  bases,
  tempDir: tempDir("pointers-"),
  env,
  cwd,
});

describe("agent pointers", () => {
  it("set each provider's base URL over the user's environment, which is otherwise kept", () => {
    const ctx = context({ PATH: "/bin", OPENAI_BASE_URL: "https://gateway.example/v1", HOME: "/home/u" });
    const env = recordEnvironment(ctx);
    const { CODEX_HOME, PI_CODING_AGENT_DIR, OPENCODE_CONFIG_CONTENT, ...rest } = env;
    expect(rest).toEqual({
      PATH: "/bin",
      HOME: "/home/u",
      ANTHROPIC_BASE_URL: bases.anthropic,
      ANTHROPIC_VERTEX_BASE_URL: bases.vertex,
      ENABLE_TOOL_SEARCH: "true",
      OPENAI_BASE_URL: bases.openai,
      GOOGLE_GEMINI_BASE_URL: bases.gemini,
      CODE_ASSIST_ENDPOINT: bases["code-assist"],
    });
    expect(ctx.env.OPENAI_BASE_URL).toBe("https://gateway.example/v1");
    // The agents configured by files get temporary copies inside the session's folder only.
    for (const dir of [CODEX_HOME, PI_CODING_AGENT_DIR]) expect(dir?.startsWith(`${ctx.tempDir}/`)).toBe(true);
    expect(readdirSync(ctx.tempDir).sort()).toEqual(
      [CODEX_HOME, PI_CODING_AGENT_DIR].map((dir) => dir!.slice(ctx.tempDir.length + 1)).sort(),
    );
    expect(JSON.parse(OPENCODE_CONFIG_CONTENT!).provider.openai.options.baseURL).toBe(bases.openai);
  });

  it("leave Claude Code's tool search as the user set it", () => {
    expect(recordEnvironment(context({ ENABLE_TOOL_SEARCH: "false" })).ENABLE_TOOL_SEARCH).toBe("false");
  });

  it("name every agent with the API it sends", () => {
    expect(AGENT_POINTERS.map((pointer) => pointer.agent)).toEqual([
      "Claude Code",
      "@anthropic-ai/sdk",
      "openai SDK",
      "Gemini CLI",
      "@google/genai",
      "Codex",
      "opencode",
      "pi",
    ]);
    for (const pointer of AGENT_POINTERS) expect(pointer.api).not.toBe("");
  });

  it("two pointers that want one variable set differently are a bug, said at once", () => {
    const rogue: AgentPointer = { agent: "Rogue", api: "x", point: () => ({ OPENAI_BASE_URL: "http://elsewhere" }) };
    AGENT_POINTERS.push(rogue);
    try {
      expect(() => pointerVariables(context())).toThrow("Rogue and openai SDK set OPENAI_BASE_URL to different values");
    } finally {
      AGENT_POINTERS.splice(AGENT_POINTERS.indexOf(rogue), 1);
    }
  });

  it("are read by the pinned openai and @anthropic-ai/sdk clients made without a base URL", () => {
    const env = pointerVariables(context());
    const saved = { ANTHROPIC_BASE_URL: process.env.ANTHROPIC_BASE_URL, OPENAI_BASE_URL: process.env.OPENAI_BASE_URL };
    Object.assign(process.env, { ANTHROPIC_BASE_URL: env.ANTHROPIC_BASE_URL, OPENAI_BASE_URL: env.OPENAI_BASE_URL });
    try {
      expect(new OpenAI({ apiKey: "sk-test" }).baseURL).toBe(bases.openai);
      expect(new Anthropic({ apiKey: "sk-ant-test" }).baseURL).toBe(bases.anthropic);
    } finally {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });

  it("say beforehand when a Claude Code settings file's env sets the base URL, which would win over record's", () => {
    const home = tempDir("claude-user-");
    const project = tempDir("claude-project-");
    const write = (file: string, settings: unknown) => {
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, JSON.stringify(settings));
    };
    write(join(home, ".claude", "settings.json"), { env: { DISABLE_TELEMETRY: "1" } });
    write(join(project, ".claude", "settings.json"), "not an object");
    expect(pointerCaveats(context({ HOME: home }, project))).toEqual([]);
    const local = join(project, ".claude", "settings.local.json");
    write(local, { env: { ANTHROPIC_BASE_URL: "https://gateway.example" } });
    expect(pointerCaveats(context({ HOME: home }, project))).toEqual([
      `Claude Code's ${local} sets ANTHROPIC_BASE_URL, which wins over record's: its requests will not reach the proxy`,
    ]);
    // CLAUDE_CONFIG_DIR moves the user's settings.
    const moved = tempDir("claude-config-");
    write(join(moved, "settings.json"), { env: { ANTHROPIC_BASE_URL: "https://other.example" } });
    expect(pointerCaveats(context({ HOME: home, CLAUDE_CONFIG_DIR: moved }, home))[0]).toContain(
      join(moved, "settings.json"),
    );
  });

  it("say beforehand when the Gemini CLI's auth type keeps it from the proxy, reading its settings files as it does", () => {
    const home = tempDir("gemini-user-");
    const project = tempDir("gemini-project-");
    const system = join(tempDir("gemini-system-"), "settings.json");
    const write = (file: string, text: string) => {
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, text);
    };
    const caveats = (env: NodeJS.ProcessEnv) =>
      pointerCaveats(context({ HOME: home, GEMINI_CLI_SYSTEM_SETTINGS_PATH: system, ...env }, project));
    const userFile = join(home, ".gemini", "settings.json");
    // No auth type selected: with a key in the environment, the CLI would stop at exit 41.
    expect(caveats({})).toEqual([]);
    expect(caveats({ GEMINI_API_KEY: "k" })).toEqual([
      `the Gemini CLI stops at "Invalid auth method selected" when GOOGLE_GEMINI_BASE_URL is set and no settings file selects an auth type: to record it with your GEMINI_API_KEY, set security.auth.selectedType to "gemini-api-key" in ${userFile}`,
    ]);
    // Settings are JSON with comments; the user's selecting the API key is all it takes.
    write(
      userFile,
      '{\n  // chosen once\n  "security": { "auth": { "selectedType": "gemini-api-key" } } /* done */\n}',
    );
    expect(caveats({ GEMINI_API_KEY: "k" })).toEqual([]);
    // GEMINI_CLI_HOME moves the user's settings.
    const moved = tempDir("gemini-home-");
    expect(caveats({ GEMINI_API_KEY: "k", GEMINI_CLI_HOME: moved })[0]).toContain(
      join(moved, ".gemini", "settings.json"),
    );
    // A workspace file wins over the user's; a sign-in with Google goes to Code Assist, which record points too.
    const workspace = join(project, ".gemini", "settings.json");
    write(workspace, JSON.stringify({ security: { auth: { selectedType: "vertex-ai" } } }));
    expect(caveats({})).toEqual([
      `the Gemini CLI's ${workspace} selects Vertex AI, whose requests go to GOOGLE_VERTEX_BASE_URL (left alone: another API's paths): they will not reach the proxy`,
    ]);
    write(userFile, JSON.stringify({ security: { auth: { selectedType: "oauth-personal" } } }));
    write(workspace, "{}");
    expect(caveats({ GEMINI_API_KEY: "k" })).toEqual([]);
    // The system file wins over both; a file that does not parse is the CLI's to report.
    write(system, JSON.stringify({ security: { auth: { selectedType: "vertex-ai" } } }));
    expect(caveats({})[0]).toContain(`the Gemini CLI's ${system} selects Vertex AI`);
    write(system, "{ not json");
    expect(caveats({})).toEqual([]);
    // With no file selecting one, the environment's choice counts.
    write(workspace, "{}");
    write(userFile, "{}");
    expect(caveats({ GOOGLE_GENAI_USE_VERTEXAI: "true", GEMINI_API_KEY: "k" })).toEqual([
      "the Gemini CLI's GOOGLE_GENAI_USE_VERTEXAI selects Vertex AI, whose requests go to GOOGLE_VERTEX_BASE_URL (left alone: another API's paths): they will not reach the proxy",
    ]);
  });
});
