import { type ParseArgsConfig, parseArgs } from "node:util";
import { UserError } from "../errors.js";
import { cliName } from "../text/invoked-as.js";
import { nearest } from "../text/nearest.js";
import { runsDirArg } from "./arg-values.js";
import { printHelp } from "./help-text.js";

export type Options = NonNullable<ParseArgsConfig["options"]>;

const HELP = { help: { type: "boolean", short: "h" } } as const;
const RUNS = { runs: { type: "string" } } as const;

/** The sentence that ends every usage error: where the command's options are explained. */
const seeHelp = (command: string) => `See '${cliName()} ${command} --help'.`;

/** A usage error (exit 2): one line naming the command and what is wrong, then where the help is. */
export const usageError = (command: string, problem: string) =>
  new UserError(`${command}: ${problem}${/[.?!]$/.test(problem) ? "" : "."} ${seeHelp(command)}`);

/**
 * What is wrong with the flags, in our words: node's own messages quote the flag unevenly and
 * suggest `-- "--flag"`, which is never what the user meant. Read from a lenient parse, which keeps
 * every flag as the user wrote it.
 */
function flagProblem(argv: string[], options: Options): string | undefined {
  const { tokens } = parseArgs({ args: argv, options, allowPositionals: true, strict: false, tokens: true });
  // Only long flags are matched: between one-letter flags every typo is "near".
  const flags = Object.keys(options).map((name) => `--${name}`);
  for (const token of tokens) {
    if (token.kind !== "option") continue;
    const option = options[token.name];
    if (!option || (token.rawName.length === 2 && option.short !== token.name)) {
      const near = token.rawName.startsWith("--") ? nearest(token.rawName, flags) : undefined;
      return `unknown flag ${token.rawName}${near ? `; did you mean ${near}?` : ""}`;
    }
    if (option.type === "boolean" && token.value !== undefined) return `${token.rawName} takes no value`;
    if (option.type === "string" && (token.value === undefined || (!token.inlineValue && token.value.startsWith("-"))))
      return `${token.rawName} needs a value${token.value === undefined ? "" : ` (write ${token.rawName}=${token.value} if "${token.value}" is it)`}`;
  }
  return undefined;
}

/** node's own parser; a bad flag becomes a usage error (exit 2) naming the command and the flag. */
function parseCommandArgs<T extends Options>(command: string, argv: string[], options: T) {
  const all = { ...HELP, ...options } as typeof HELP & T;
  try {
    return parseArgs({ args: argv, options: all, allowPositionals: true, strict: true });
  } catch (error) {
    throw usageError(command, flagProblem(argv, all) ?? (error as Error).message);
  }
}

export interface CommandSpec<T extends Options> {
  name: string;
  help: string;
  options: T;
  /**
   * The positionals as the help names them, in order: `["<run>", "<seq>"]`; a word without brackets
   * is a literal (`["otel", "<run...>"]`), a last name with `...` takes any number more, a name in
   * brackets may be left out (`["[<run>]", "<seq>"]`: one word is the seq).
   * Without it, any number.
   */
  positionals?: string[];
  /** False for a command that reads no runs (`skills`): it takes no `--runs`. */
  runs?: false;
}

/** What is wrong with the positionals, or undefined when they fit the names. */
function positionalProblem(given: string[], names: string[] | undefined): string | undefined {
  if (!names) return undefined;
  const literal = names.findIndex((name, i) => /^[a-z]/.test(name) && i < given.length && given[i] !== name);
  if (literal >= 0) return `expected ${names.slice(literal).join(" ")}, got "${given[literal]}"`;
  // A name in brackets (`[<run>]`) may be left out: the command then takes its default (the latest run).
  const required = names.filter((name) => !name.startsWith("["));
  if (given.length < required.length) return `missing ${required.slice(given.length).join(" ")}`;
  if (names.at(-1)?.includes("...") || given.length <= names.length) return undefined;
  const extra = given.slice(names.length).map((word) => JSON.stringify(word));
  return `unexpected ${extra.join(" ")} (${names.length === 0 ? "it takes no arguments" : `it takes ${names.join(" ")}`})`;
}

/**
 * The prologue every command shares: parse (with `-h`/`--help` and `--runs DIR`), print the help and
 * stop when it was asked for (exit 0), refuse positionals that do not fit the command's names (exit 2,
 * one line on stderr), and resolve the runs folder (default `runs/` of the project). A number is the
 * exit code of a command that is done.
 */
export function parseCommand<T extends Options>(argv: string[], spec: CommandSpec<T>) {
  const options = (spec.runs === false ? spec.options : { ...RUNS, ...spec.options }) as typeof RUNS & T;
  const { values, positionals } = parseCommandArgs(spec.name, argv, options);
  // The two flags every command has, read where T is still open.
  const shared = values as { help?: boolean; runs?: string };
  if (shared.help) {
    printHelp(spec.help);
    return 0;
  }
  const problem = positionalProblem(positionals, spec.positionals);
  if (problem) throw usageError(spec.name, problem);
  const runsDir = spec.runs === false ? "" : runsDirArg(spec.name, shared.runs);
  return { values, positionals, runsDir };
}
