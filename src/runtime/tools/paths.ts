import { isAbsolute, resolve } from "node:path";

export function resolvePath(cwd: string, path: unknown): string {
  if (typeof path !== "string" || path === "") throw new Error("path must be a non-empty string");
  const expanded = path.startsWith("~/") ? `${process.env.HOME ?? ""}${path.slice(1)}` : path;
  return isAbsolute(expanded) ? expanded : resolve(cwd, expanded);
}

export function optionalNumber(value: unknown, name: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number" || !Number.isFinite(value)) throw new Error(`${name} must be a number`);
  return value;
}
