import { parse as parseYaml } from "yaml";
import { inputError } from "./errors.js";
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
    throw inputError(file, undefined, `expected YAML (${(error as Error).message})`);
  }
}
