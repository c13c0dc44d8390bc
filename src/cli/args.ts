import { type ParseArgsConfig, parseArgs } from "node:util";
import { UserError } from "../errors.js";

export type Options = NonNullable<ParseArgsConfig["options"]>;

const HELP = { help: { type: "boolean", short: "h" } } as const;

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
