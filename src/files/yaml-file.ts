import { parse as parseYaml } from "yaml";
import { inputError } from "../errors.js";
import { readInputFile } from "./input-file.js";

/**
 * The document of a YAML input file (tolerances, pricing), or a UserError naming the file: unreadable,
 * over the input limit, or not YAML. Apart from input-file.ts so modules that read no YAML (the stub
 * servers' fixtures) do not load the parser.
 */
export function readYamlFile(file: string, what: string): unknown {
  const text = readInputFile(file, what).toString("utf8");
  try {
    return parseYaml(text);
  } catch (error) {
    throw inputError(file, undefined, `expected YAML (${yamlErrorLine((error as Error).message)})`);
  }
}

/** Error lines quote at most this much of a file. */
const MAX_ERROR_LINE = 200;

/**
 * A YAML parser's message in one line, as every error is: its reason and position, then the last
 * source line of the excerpt the parser shows beneath them (without the caret line).
 */
export function yamlErrorLine(message: string): string {
  const [head = "", ...excerpt] = message.split("\n");
  const shown = excerpt
    .filter((line) => line.trim() !== "" && !/^\s*\^+\s*$/.test(line))
    .at(-1)
    ?.trim();
  const reason = head.replace(/:$/, "");
  const line = shown ? `${reason}: ${shown}` : reason;
  return line.length > MAX_ERROR_LINE ? `${line.slice(0, MAX_ERROR_LINE)}…` : line;
}
