import { keepTail, saveFullOutput } from "../../output-limit.js";
import { ProcessTimedOut, runProcess } from "../../processes/run-process.js";
import type { ToolTexts } from "../profile.js";
import type { RuntimeTool, ToolContext } from "../types.js";
import { optionalNumber } from "./paths.js";
import { objectSchema, prop, toolHeader } from "./schema.js";

interface Shell {
  name: "bash" | "powershell";
  program: string;
  argsFor(command: string): string[];
}

const SHELLS: Record<Shell["name"], Shell> = {
  bash: { name: "bash", program: "bash", argsFor: (command) => ["-c", command] },
  powershell: { name: "powershell", program: "pwsh", argsFor: (command) => ["-NoProfile", "-Command", command] },
};

/** The shell's combined output and exit code; the model-facing failure texts are made here. */
async function runCommand(
  shell: Shell,
  command: string,
  ctx: ToolContext,
  timeoutSec?: number,
): Promise<{ output: string; code: number | null }> {
  try {
    const result = await runProcess(shell.program, shell.argsFor(command), {
      cwd: ctx.cwd,
      env: ctx.env,
      timeoutMs: timeoutSec === undefined ? undefined : timeoutSec * 1000,
    });
    return { output: result.combined, code: result.code };
  } catch (error) {
    if (error instanceof ProcessTimedOut) {
      throw new Error(
        `${error.output.combined.replace(/\n$/, "")}\n\nCommand timed out after ${timeoutSec} seconds`.trimStart(),
      );
    }
    throw new Error(`${shell.program} could not be started: ${(error as Error).message}`);
  }
}

function shellTool(shell: Shell, t: ToolTexts): RuntimeTool {
  return {
    ...toolHeader(shell.name, t),
    parameters: objectSchema(
      { command: prop("string", t.parameters.command!), timeout: prop("number", t.parameters.timeout!) },
      ["command"],
    ),
    async execute(args, ctx) {
      if (typeof args.command !== "string" || args.command === "")
        throw new Error("command must be a non-empty string");
      const { output, code } = await runCommand(shell, args.command, ctx, optionalNumber(args.timeout, "timeout"));
      const cut = keepTail(output.replace(/\n$/, ""));
      let text = cut.text === "" ? "(no output)" : cut.text;
      if (cut.truncated) {
        text += `\n\n[Showing the last ${cut.shownLines} of ${cut.totalLines} lines. Full output: ${saveFullOutput(output)}]`;
      }
      if (code !== 0) throw new Error(`${text}\n\nCommand exited with code ${code}`);
      return { content: text };
    },
  };
}

export const bashTool = (texts: (name: string) => ToolTexts) => shellTool(SHELLS.bash, texts("bash"));
export const powershellTool = (texts: (name: string) => ToolTexts) => shellTool(SHELLS.powershell, texts("powershell"));
