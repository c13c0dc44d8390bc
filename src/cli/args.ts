import { type ParseArgsConfig, parseArgs } from "node:util";
import { UserError } from "../errors.js";
import { runsDirArg } from "./arg-values.js";

export type Options = NonNullable<ParseArgsConfig["options"]>;

const HELP = { help: { type: "boolean", short: "h" } } as const;
const RUNS = { runs: { type: "string" } } as const;

/** node's own parser; a bad flag becomes a usage error (exit 2) naming the command. */
export function parseCommandArgs<T extends Options>(command: string, argv: string[], options: T) {
  try {
    return parseArgs({
      args: argv,
      options: { ...HELP, ...options } as typeof HELP & T,
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    throw new UserError(`${command}: ${(error as Error).message}. See 'payload-probe ${command} --help'.`);
  }
}

export interface CommandSpec<T extends Options> {
  name: string;
  help: string;
  options: T;
  /** How many positionals the command takes, at least and at most (default: any number). */
  positionals?: { min?: number; max?: number };
  /** False for a command that reads no runs (`skills`): it takes no `--runs`. */
  runs?: false;
}

/**
 * The prologue every command shares: parse (with `-h`/`--help` and `--runs DIR`), print the help and
 * stop when it was asked for (exit 0) or the positionals do not fit (exit 2), and resolve the runs
 * folder (default `runs/` of the project). A number is the exit code of a command that is done.
 */
export function parseCommand<T extends Options>(argv: string[], spec: CommandSpec<T>) {
  const options = (spec.runs === false ? spec.options : { ...RUNS, ...spec.options }) as typeof RUNS & T;
  const { values, positionals } = parseCommandArgs(spec.name, argv, options);
  const { min = 0, max = Number.POSITIVE_INFINITY } = spec.positionals ?? {};
  // The two flags every command has, read where T is still open.
  const shared = values as { help?: boolean; runs?: string };
  if (shared.help || positionals.length < min || positionals.length > max) {
    console.log(spec.help);
    return shared.help ? 0 : 2;
  }
  const runsDir = spec.runs === false ? "" : runsDirArg(spec.name, shared.runs);
  return { values, positionals, runsDir };
}
