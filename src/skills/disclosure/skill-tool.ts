/**
 * A directory skill's command tool: the program runs in the skill root, receives the model's
 * arguments as JSON on stdin, and its stdout is the result — under a timeout and an output limit,
 * like any other tool; coming from a skill grants nothing extra.
 */

import { keepHead, MAX_LINES } from "../../output-limit.js";
import { ProcessTimedOut, runProcess } from "../../processes/run-process.js";
import type { RuntimeTool } from "../../runtime/types.js";
import type { SkillToolSpec } from "./types.js";

export interface SkillToolLimits {
  timeoutMs: number;
  maxOutputBytes: number;
}

const DEFAULT_SKILL_TOOL_LIMITS: SkillToolLimits = { timeoutMs: 30_000, maxOutputBytes: 50 * 1024 };

export function createSkillTool(spec: SkillToolSpec, limits: SkillToolLimits = DEFAULT_SKILL_TOOL_LIMITS): RuntimeTool {
  return {
    name: spec.name,
    label: spec.name,
    description: spec.description,
    parameters: spec.inputSchema,
    async execute(args, ctx) {
      const { stdout, stderr, code } = await runSkillCommand(spec, JSON.stringify(args), ctx.env, limits.timeoutMs);
      const cut = keepHead(stdout.replace(/\n$/, ""), MAX_LINES, limits.maxOutputBytes);
      const text = cut.truncated ? `${cut.text}\n\n[output cut at ${limits.maxOutputBytes} bytes]` : cut.text;
      if (code !== 0)
        throw new Error(
          `${text}${stderr.trim() ? `\n${stderr.trim()}` : ""}\n\n${spec.name} exited with code ${code}`.trimStart(),
        );
      return { content: text };
    },
  };
}

async function runSkillCommand(
  spec: SkillToolSpec,
  input: string,
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
): Promise<{ stdout: string; stderr: string; code: number | null }> {
  const [program, ...args] = spec.command as [string, ...string[]];
  try {
    return await runProcess(program, args, { cwd: spec.root, env, input, timeoutMs });
  } catch (error) {
    if (error instanceof ProcessTimedOut) throw new Error(`${spec.name} timed out after ${timeoutMs} ms`);
    throw new Error(`${spec.name} could not be started: ${(error as Error).message}`);
  }
}
