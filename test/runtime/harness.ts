/** An Agent on the scripted model with every wire body kept, and temp folders removed after each test. */
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_MODEL_REF, resolveModel } from "../../src/providers/models.js";
import { openaiCompletions } from "../../src/providers/openai-completions.js";
import { createScriptedModel, type ScriptStep } from "../../src/providers/scripted-model.js";
import type { Transport } from "../../src/providers/types.js";
import { Agent, type AgentOptions } from "../../src/runtime/agent.js";
import { loadProfile } from "../../src/runtime/load-profile.js";
import type { RuntimeTool } from "../../src/runtime/types.js";

export const profile = loadProfile();
export const model = resolveModel(DEFAULT_MODEL_REF, "openai-completions");

const dirs: string[] = [];
const fileDirs: string[] = [];

/** A fresh temp folder (real path, so tool results can be compared with it), kept in `list` for removal. */
function madeTempDir(prefix: string, list: string[]): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  list.push(dir);
  return dir;
}

const removeAll = (list: string[]) => {
  for (const dir of list.splice(0)) rmSync(dir, { recursive: true, force: true });
};

/** A fresh temp folder for one test, removed by `removeTempDirs` (each file's afterEach). */
export function tempDir(prefix = "runtime-test-"): string {
  return madeTempDir(prefix, dirs);
}

export function removeTempDirs(): void {
  removeAll(dirs);
}

/**
 * A fresh temp folder that outlives the test that made it, for what a file's tests share (a session
 * recorded once), removed by `removeFileTempDirs` when the file's tests are done.
 */
export function fileTempDir(prefix: string): string {
  return madeTempDir(prefix, fileDirs);
}

export function removeFileTempDirs(): void {
  removeAll(fileDirs);
}

/** The parsed JSON of one openai-completions request body. */
export interface WireBody {
  model: string;
  messages: { role: string; content: unknown; tool_calls?: unknown[]; tool_call_id?: string }[];
  tools?: { type: string; function: { name: string; description: string; parameters: unknown; strict: boolean } }[];
  [key: string]: unknown;
}

export interface ScriptedAgent {
  agent: Agent;
  /** Every request body, parsed, in the order sent. */
  bodies: WireBody[];
}

/** An agent whose provider is the scripted model; `script` is the model's turns. */
export async function scriptedAgent(script: ScriptStep[], options: Partial<AgentOptions> = {}): Promise<ScriptedAgent> {
  const cwd = options.cwd ?? tempDir();
  const bodies: WireBody[] = [];
  const scripted = createScriptedModel(openaiCompletions, { loop: script });
  const transport: Transport = async (request) => {
    bodies.push(JSON.parse(request.body) as WireBody);
    return scripted(request);
  };
  const agent = await Agent.create({
    profile,
    cwd,
    agentDir: join(cwd, ".agent"),
    packageDir: "/opt/pkg",
    model,
    codec: openaiCompletions,
    transport,
    ...options,
  });
  return { agent, bodies };
}

/** A small extension tool; `run` decides what its execution does (default: answers "ok"). */
export function extensionTool(name: string, extra: Partial<RuntimeTool> = {}): RuntimeTool {
  return {
    name,
    description: `The ${name} test tool.`,
    parameters: { type: "object", properties: {} },
    promptSnippet: `Test tool ${name}`,
    execute: async () => ({ content: "ok" }),
    ...extra,
  };
}

export const toolNames = (body: WireBody) => body.tools?.map((t) => t.function.name);
export const systemText = (body: WireBody) => body.messages[0]!.content as string;
