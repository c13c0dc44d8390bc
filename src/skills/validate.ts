/**
 * The skill metadata rules of pi-runtime.md §4.3. Each returns warning messages; none of them
 * blocks loading except a missing description, which the loader checks itself.
 */

const MAX_NAME_LENGTH = 64;
const MAX_DESCRIPTION_LENGTH = 1024;

export const DESCRIPTION_REQUIRED = "description is required";

/** True when a description is usable: a string with something other than whitespace. */
export function hasDescription(description: unknown): description is string {
  return typeof description === "string" && description.trim() !== "";
}

export function validateDescription(description: string): string[] {
  return description.length > MAX_DESCRIPTION_LENGTH
    ? [`description exceeds ${MAX_DESCRIPTION_LENGTH} characters (${description.length})`]
    : [];
}

/** pi warns about these but still loads the skill; it has no "name equals directory" rule. */
export function validateName(name: string): string[] {
  const warnings: string[] = [];
  if (name.length > MAX_NAME_LENGTH) {
    warnings.push(`name exceeds ${MAX_NAME_LENGTH} characters (${name.length})`);
  }
  if (!/^[a-z0-9-]+$/.test(name)) {
    warnings.push("name contains invalid characters (must be lowercase a-z, 0-9, hyphens only)");
  }
  if (name.startsWith("-") || name.endsWith("-")) {
    warnings.push("name must not start or end with a hyphen");
  }
  if (name.includes("--")) {
    warnings.push("name must not contain consecutive hyphens");
  }
  return warnings;
}
