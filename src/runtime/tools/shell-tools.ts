import { spawn } from "node:child_process";
import type { ToolTexts } from "../profile.js";
import type { RuntimeTool } from "../types.js";
import { keepTail, saveFullOutput } from "./output-limit.js";
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

function runCommand(shell: Shell, command: string, cwd: string, timeoutSec?: number): Promise<{ output: string; code: number | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(shell.program, shell.argsFor(command), { cwd, stdio: ["ignore", "pipe", "pipe"], detached: true });
    let output = "";
    const collect = (chunk: Buffer) => (output += chunk.toString("utf8"));
    child.stdout.on("data", collect);
    child.stderr.on("data", collect);
    // Kill the whole process group: a command's own children must not outlive its timeout.
    const timer =
      timeoutSec === undefined
        ? undefined
        : setTimeout(() => {
            try {
              process.kill(-child.pid!, "SIGKILL");
            } catch {
              /* already gone */
            }
            reject(new Error(`${output.replace(/\n$/, "")}\n\nCommand timed out after ${timeoutSec} seconds`.trimStart()));
          }, timeoutSec * 1000);
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(new Error(`${shell.program} could not be started: ${error.message}`));
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ output, code });
    });
  });
}

function shellTool(shell: Shell, t: ToolTexts): RuntimeTool {
  return {
    ...toolHeader(shell.name, t),
    parameters: objectSchema(
      { command: prop("string", t.parameters.command!), timeout: prop("number", t.parameters.timeout!) },
      ["command"],
    ),
    async execute(args, ctx) {
      if (typeof args.command !== "string" || args.command === "") throw new Error("command must be a non-empty string");
      const { output, code } = await runCommand(shell, args.command, ctx.cwd, optionalNumber(args.timeout, "timeout"));
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
