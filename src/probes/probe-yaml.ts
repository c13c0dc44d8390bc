import { isMap, isScalar, LineCounter, parseDocument } from "yaml";
import { inputError } from "../errors.js";
import { readInputFile } from "../files/input-file.js";
import { isInside } from "../files/safe-path.js";
import { yamlErrorLine } from "../files/yaml-file.js";
import { dottedPath, type FieldNamer } from "../validate.js";

/** A probe file's YAML, and how its fields are named in error messages. */
export interface ProbeYaml {
  value: unknown;
  fieldName: FieldNamer;
}

/** Longest YAML error line quoted from a project file; a long token makes the parser's line long. */

/** A key made of these is a field name; anything else in a key is content of the file. */
const PLAIN_KEY = /^[A-Za-z0-9_.-]{1,64}$/;

/**
 * Parses a probe file's text (`readProbeText`) as YAML. Its content appears in error messages only when the file lies
 * inside the project root (`root`): a file elsewhere may be anything the user can point at
 * (`run /etc/shadow`), so its YAML errors give reason and position only, and keys that are not
 * plain names are shown by their line.
 */
export function parseProbeYaml(file: string, text: string, root: string): ProbeYaml {
  const quotesContent = isInside(root, file);
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: true });
  const error = doc.errors[0];
  if (error) {
    const reason = quotesContent
      ? yamlErrorLine(error.message)
      : `${error.code.toLowerCase().replaceAll("_", " ")} at line ${error.linePos?.[0].line}, column ${error.linePos?.[0].col}`;
    throw inputError(file, undefined, `expected valid YAML (${reason})`);
  }
  let value: unknown;
  try {
    value = doc.toJS();
  } catch (cause) {
    // Aliases are resolved here: an unknown one, or one that expands beyond the parser's limit.
    const reason = quotesContent ? yamlErrorLine((cause as Error).message) : "an alias cannot be resolved";
    throw inputError(file, undefined, `expected valid YAML (${reason})`);
  }
  if (quotesContent) return { value, fieldName: dottedPath };
  const keyLine = (path: readonly PropertyKey[], index: number): number | undefined => {
    const parent = index === 0 ? doc.contents : doc.getIn(path.slice(0, index) as unknown[], true);
    if (!isMap(parent)) return undefined;
    const pair = parent.items.find((item) => isScalar(item.key) && String(item.key.value) === String(path[index]));
    const start = isScalar(pair?.key) ? pair.key.range?.[0] : undefined;
    return start === undefined ? undefined : lines.linePos(start).line;
  };
  return {
    value,
    fieldName: (path) =>
      dottedPath(
        path.map((key, i) =>
          typeof key === "number" || PLAIN_KEY.test(String(key)) ? key : `<key at line ${keyLine(path, i) ?? "?"}>`,
        ),
      ),
  };
}

/** The file as text; a file that is not UTF-8 text (an image, an archive) is named, never echoed, as is one over 1 MiB. */
export function readProbeText(file: string): string {
  const bytes = readInputFile(file, "probe file");
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    text = "\0";
  }
  // YAML 1.2 (5.1) allows no C0 control characters other than tab, line feed and carriage return.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
  if (/[\0-\x08\x0b\x0c\x0e-\x1f\x7f]/.test(text)) {
    throw inputError(file, undefined, "expected YAML text, but the file holds binary data");
  }
  return text;
}
