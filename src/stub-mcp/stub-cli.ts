import { parseArgs } from "node:util";
import { inputError, UserError } from "../errors.js";

/** The flags the stub servers understand; each stub accepts the subset that makes sense for it. */
export type StubFlag = "name" | "fixture" | "fault" | "http" | "http-fail" | "sse";

export interface StubArgs {
  name?: string;
  fixture?: string;
  /** `--fault garbage-on-start`: junk on stdout before the client's initialize is answered. */
  garbageOnStart: boolean;
  /** `--http <port>`: serve Streamable HTTP on 127.0.0.1 instead of stdio; 0 picks a free port. */
  httpPort?: number;
  /** `--http-fail <status>`: answer every HTTP request with this status. */
  httpFailStatus?: number;
  /** `--sse <port>`: serve the legacy HTTP+SSE transport on 127.0.0.1 instead of stdio; 0 picks a free port. */
  ssePort?: number;
}

const COMMAND_LINE = "command line";

export function parseStubArgs(argv: string[], accepted: readonly StubFlag[]): StubArgs {
  const options = Object.fromEntries(accepted.map((flag) => [flag, { type: "string" as const }]));
  let values: Record<string, string | boolean | (string | boolean)[] | undefined>;
  try {
    values = parseArgs({ args: argv, options, strict: true, allowPositionals: false }).values;
  } catch (error) {
    const accepts = accepted.map((flag) => `--${flag} <value>`).join(", ");
    throw inputError(COMMAND_LINE, undefined, `${(error as Error).message} (this stub accepts: ${accepts})`);
  }
  const text = (flag: StubFlag) => values[flag] as string | undefined;

  const fault = text("fault");
  if (fault !== undefined && fault !== "garbage-on-start") {
    throw inputError(COMMAND_LINE, "--fault", `expected "garbage-on-start", got "${fault}"`);
  }
  const args: StubArgs = {
    name: text("name"),
    fixture: text("fixture"),
    garbageOnStart: fault === "garbage-on-start",
    httpPort: integerFlag("--http", text("http"), 0, 65535),
    httpFailStatus: integerFlag("--http-fail", text("http-fail"), 400, 599),
    ssePort: integerFlag("--sse", text("sse"), 0, 65535),
  };
  if (args.ssePort !== undefined && args.httpPort !== undefined) {
    throw inputError(COMMAND_LINE, "--sse", "expected either --sse <port> or --http <port>, not both");
  }
  if (args.httpFailStatus !== undefined && args.httpPort === undefined) {
    throw inputError(COMMAND_LINE, "--http-fail", "expected together with --http <port>");
  }
  // Junk before initialize only means something on stdio; with --http, stdout carries LISTENING.
  if (args.garbageOnStart && (args.httpPort !== undefined || args.ssePort !== undefined)) {
    throw inputError(COMMAND_LINE, "--fault", "garbage-on-start applies to stdio only, not with --http or --sse");
  }
  return args;
}

function integerFlag(flag: string, value: string | undefined, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (!/^\d+$/.test(value) || number < min || number > max) {
    throw inputError(COMMAND_LINE, flag, `expected an integer from ${min} to ${max}, got "${value}"`);
  }
  return number;
}

/** Runs a stub's main; bad input ends with its one-line message and exit 2, anything else with a stack. */
export function runStub(main: () => Promise<void>): void {
  main().catch((error: unknown) => {
    if (error instanceof UserError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(2);
    }
    process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  });
}
