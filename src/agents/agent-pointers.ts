/**
 * How `record` points each known agent at its capture proxy: the environment variables (and, for
 * agents only a file configures, temporary config files) that make the agent send its model requests
 * to the proxy instead of the provider. Each agent's entry says what it honours, from its own
 * documentation or code (docs/decisions.md, "record"). The user's own files are never touched.
 */

import { basename } from "node:path";
import { UserError } from "../errors.js";
import { claudeCodePointer } from "./claude-code-pointer.js";
import { codexPointer } from "./codex-pointer.js";
import { geminiCliPointer } from "./gemini-cli-pointer.js";
import { opencodePointer } from "./opencode-pointer.js";
import { piPointer } from "./pi-pointer.js";
import type { AgentPointer, PointerContext } from "./pointer-types.js";

/** `new Anthropic()` without baseURL reads ANTHROPIC_BASE_URL (client.js of the pinned 1.16.0). */
const anthropicSdk: AgentPointer = {
  agent: "@anthropic-ai/sdk",
  api: "Anthropic Messages",
  point: ({ bases }) => ({ ANTHROPIC_BASE_URL: bases.anthropic }),
};

/** `new OpenAI()` without baseURL reads OPENAI_BASE_URL (client.js of the pinned 6.49.0). */
const openaiSdk: AgentPointer = {
  agent: "openai SDK",
  api: "OpenAI chat completions, Responses",
  point: ({ bases }) => ({ OPENAI_BASE_URL: bases.openai }),
};

/** `new GoogleGenAI()` without a base URL reads GOOGLE_GEMINI_BASE_URL (node_client.ts of the pinned 2.32.0). */
const genaiSdk: AgentPointer = {
  agent: "@google/genai",
  api: "Gemini generateContent",
  point: ({ bases }) => ({ GOOGLE_GEMINI_BASE_URL: bases.gemini }),
};

/** Codex, opencode and pi are configured by files: their pointers write temporary copies (pointer-files.ts). */
export const AGENT_POINTERS: AgentPointer[] = [
  claudeCodePointer,
  anthropicSdk,
  openaiSdk,
  geminiCliPointer,
  genaiSdk,
  codexPointer,
  opencodePointer,
  piPointer,
];

/**
 * Every variable the pointers set, merged. Two pointers that want one variable set to different
 * values are a bug, said at once rather than let the later one win. A pointer that cannot read its
 * agent's config (a UserError) is told to `unpointed` when given, and that agent is left as it is.
 */
export function pointerVariables(
  ctx: PointerContext,
  unpointed?: (pointer: AgentPointer, error: UserError) => void,
): Record<string, string> {
  const set: Record<string, string> = {};
  const by: Record<string, string> = {};
  for (const pointer of AGENT_POINTERS) {
    for (const [name, value] of Object.entries(pointed(pointer, ctx, unpointed))) {
      if (set[name] !== undefined && set[name] !== value)
        throw new Error(`${pointer.agent} and ${by[name]} set ${name} to different values`);
      set[name] = value;
      by[name] = pointer.agent;
    }
  }
  return set;
}

function pointed(
  pointer: AgentPointer,
  ctx: PointerContext,
  unpointed: ((pointer: AgentPointer, error: UserError) => void) | undefined,
): Record<string, string> {
  try {
    return pointer.point(ctx);
  } catch (error) {
    if (!(error instanceof UserError) || !unpointed) throw error;
    unpointed(pointer, error);
    return {};
  }
}

/** The command's environment: the user's, with every pointer's variables set over it. */
export function recordEnvironment(ctx: PointerContext): NodeJS.ProcessEnv {
  return { ...ctx.env, ...pointerVariables(ctx) };
}

/**
 * The environment `record` runs `program` with (recordEnvironment), and a line for each agent it
 * leaves unpointed. A config of an agent's that cannot be read is the command's concern only when the
 * command runs that agent (`programs`): then it is bad input, before anything starts; for any other
 * command it is a warning, as that command will not read it.
 */
export function commandEnvironment(
  ctx: PointerContext,
  program: string,
): { env: NodeJS.ProcessEnv; unpointed: string[] } {
  const unpointed: string[] = [];
  const name = basename(program);
  const variables = pointerVariables(ctx, (pointer, error) => {
    if (pointer.programs?.includes(name)) throw error;
    unpointed.push(`${pointer.agent} is not pointed at the proxy: ${error.message}`);
  });
  return { env: { ...ctx.env, ...variables }, unpointed };
}

/** What the pointers can tell beforehand would keep an agent from the proxy, one line each. */
export function pointerCaveats(ctx: PointerContext): string[] {
  return AGENT_POINTERS.flatMap((pointer) => pointer.caveat?.(ctx) ?? []);
}
