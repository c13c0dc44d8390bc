import { z } from "zod";
import { inputError, type UserError } from "./errors.js";
import "./zod-jitless.js";

/**
 * One way to validate input files (probes, stub fixtures, MCP configs, profiles): a zod schema
 * whose every part carries its own "expected …" message, and one formatter that turns the first
 * problem into a UserError naming the file and the dotted field (`expect.each.tools[2]`).
 */

type Path = readonly PropertyKey[];

/** How a field is shown: `expect.each.tools[2]`, or undefined for the whole file. */
export type FieldNamer = (path: Path) => string | undefined;

/** Keys joined by dots, list indexes in brackets: `expect.each.tools[2]`. */
export function dottedPath(path: Path): string | undefined {
  let out = "";
  for (const key of path) {
    if (typeof key === "number") out += `[${key}]`;
    else out += out ? `.${String(key)}` : String(key);
  }
  return out || undefined;
}

/** Parses `value` with `schema`; the first problem becomes a UserError naming the file and the field. */
export function parseInput<S extends z.ZodType>(
  schema: S,
  value: unknown,
  file: string,
  fieldName: FieldNamer = dottedPath,
): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw issueError(result.error.issues[0]!, [], file, fieldName);
}

/**
 * A union names the alternative the input was meant to be — the one whose problems lie inside
 * its fields rather than in its shape — and otherwise says what the alternatives are.
 */
function issueError(issue: z.core.$ZodIssue, base: Path, file: string, fieldName: FieldNamer): UserError {
  const path = [...base, ...issue.path];
  if (issue.code === "invalid_union") {
    const meant = issue.errors.filter((issues) => issues.length > 0 && !issues.some(isShapeMismatch));
    if (meant.length === 1) return issueError(meant[0]![0]!, path, file, fieldName);
  }
  if (issue.code === "unrecognized_keys") return inputError(file, fieldName([...path, issue.keys[0]!]), issue.message);
  if (issue.code === "invalid_key") return inputError(file, fieldName(path), issue.issues[0]?.message ?? issue.message);
  return inputError(file, fieldName(path), issue.message);
}

/** A key the alternative does not have, or one it needs and the input lacks. */
function isShapeMismatch(issue: z.core.$ZodIssue): boolean {
  return (
    issue.path.length <= 1 &&
    (issue.code === "unrecognized_keys" || (issue.code === "invalid_type" && issue.input === undefined))
  );
}

/**
 * A mapping with exactly these fields: an unknown field is named with the fields allowed there,
 * and anything that is not a mapping gets `notAMapping`.
 */
export function strictMapping<T extends z.core.$ZodLooseShape>(shape: T, notAMapping: string) {
  const known = Object.keys(shape).join(", ");
  return z.strictObject(shape, {
    error: (issue) => (issue.code === "unrecognized_keys" ? `unknown field; expected one of ${known}` : notAMapping),
  });
}
