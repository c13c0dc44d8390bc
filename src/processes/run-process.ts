/**
 * Running a tool's program, shared by the runtime's shell tools and the load_skill model's skill
 * command tools. It lives outside both layers (a neutral module) so a skill tool needs nothing of
 * the runtime beyond its extension API.
 */

import { spawn } from "node:child_process";

/** What a finished (or stopped) process wrote: each stream apart, and both in arrival order. */
export interface ProcessOutput {
  stdout: string;
  stderr: string;
  combined: string;
}

export interface ProcessResult extends ProcessOutput {
  code: number | null;
}

/** The process ran past its time and was killed with its whole group; what it wrote until then. */
export class ProcessTimedOut extends Error {
  constructor(
    readonly output: ProcessOutput,
    readonly timeoutMs: number,
  ) {
    super(`timed out after ${timeoutMs} ms`);
  }
}

/** The process groups of tool programs still running, stopped with the process on a signal. */
const runningGroups = new Set<number>();

/**
 * Kills every tool program still running, with whatever it started: each has a process group of its
 * own, which a signal to payload-probe does not reach, so without this it would outlive the run.
 */
export function killRunningProcesses(): void {
  for (const group of runningGroups) {
    try {
      process.kill(-group, "SIGKILL");
    } catch {
      /* already gone */
    }
  }
  runningGroups.clear();
}

/**
 * Run a program for a tool: optional stdin text, an optional time limit, output collected. It gets a
 * process group of its own so a timeout kills whatever it started too, not just the program.
 */
export function runProcess(
  program: string,
  args: string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv; input?: string; timeoutMs?: number },
): Promise<ProcessResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, {
      cwd: options.cwd,
      env: options.env,
      stdio: [options.input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
      detached: true,
    });
    if (child.pid !== undefined) runningGroups.add(child.pid);
    const output: ProcessOutput = { stdout: "", stderr: "", combined: "" };
    child.stdout!.on("data", (chunk: Buffer) => {
      const text = chunk.toString("utf8");
      output.stdout += text;
      output.combined += text;
    });
    child.stderr!.on("data", (chunk: Buffer) => {
      const text = chunk.toString("utf8");
      output.stderr += text;
      output.combined += text;
    });
    const timer =
      options.timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            try {
              process.kill(-child.pid!, "SIGKILL");
            } catch {
              /* already gone */
            }
            reject(new ProcessTimedOut({ ...output }, options.timeoutMs!));
          }, options.timeoutMs);
    child.on("error", (error) => {
      clearTimeout(timer);
      // Spawn failed: not found, not executable, or a bad cwd.
      reject(error);
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      if (child.pid !== undefined) runningGroups.delete(child.pid);
      resolve({ ...output, code });
    });
    if (options.input !== undefined) {
      // A program that never reads stdin closes the pipe early; that is its choice, not a failure.
      child.stdin!.on("error", () => undefined);
      child.stdin!.end(options.input);
    }
  });
}
