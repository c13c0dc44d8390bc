/**
 * The command `record` wraps: started with the terminal (stdin, stdout, stderr inherited) in record's
 * own process group, so it stays in the terminal's foreground and reads it as if started alone.
 */
import { spawn } from "node:child_process";
import { constants } from "node:os";

/** How the command ended, as the exit code record takes over; `failed` when it never started. */
export interface CommandEnd {
  exitCode: number;
  failed?: string;
}

const SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"] as const;
type Signal = (typeof SIGNALS)[number];

/**
 * Signals a terminal sends to its whole foreground group (Ctrl-C, Ctrl-\): when record runs at a
 * terminal, the command has them already, and a second copy would read as a second keypress (an
 * agent's "press Ctrl-C again to exit").
 */
const FROM_TERMINAL = new Set<Signal>(["SIGINT", "SIGQUIT"]);
const atTerminal = () => Boolean(process.stdin.isTTY || process.stdout.isTTY || process.stderr.isTTY);

/** The shell's code for a process ended by a signal: 128 + its number. */
const signalCode = (signal: NodeJS.Signals) => 128 + (constants.signals[signal] ?? 0);

/**
 * Runs the command to its end. A signal sent to record is passed on (except what the terminal already
 * sent the command) and record keeps waiting; a second one passed on kills the command outright.
 * Resolves with the command's exit code, 128 + N when signal N ended it, or 127 (126) with the reason
 * when it could not be started.
 */
export function runCommand(command: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<CommandEnd> {
  return new Promise((resolve) => {
    const child = spawn(command[0]!, command.slice(1), { stdio: "inherit", env, cwd });
    let passed = 0;
    const pass = (signal: Signal) => {
      if (FROM_TERMINAL.has(signal) && atTerminal()) return;
      passed++;
      child.kill(passed > 1 ? "SIGKILL" : signal);
    };
    for (const signal of SIGNALS) process.on(signal, pass);
    const done = (end: CommandEnd) => {
      for (const signal of SIGNALS) process.off(signal, pass);
      resolve(end);
    };
    child.once("error", (error: NodeJS.ErrnoException) =>
      done({ exitCode: error.code === "ENOENT" ? 127 : 126, failed: error.message }),
    );
    child.once("exit", (code, signal) => done({ exitCode: signal ? signalCode(signal) : (code ?? 0) }));
  });
}
