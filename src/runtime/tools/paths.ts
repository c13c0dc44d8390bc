import { isAbsolute, resolve } from "node:path";
import type { ToolContext } from "../types.js";

/** A tool's path argument: `~/` is the agent's HOME, a relative path is taken from its cwd. */
export function resolvePath(ctx: ToolContext, path: unknown): string {
  if (typeof path !== "string" || path === "") throw new Error("path must be a non-empty string");
  const expanded = path.startsWith("~/") ? `${ctx.env.HOME ?? ""}${path.slice(1)}` : path;
  return isAbsolute(expanded) ? expanded : resolve(ctx.cwd, expanded);
}

export function optionalNumber(value: unknown, name: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number" || !Number.isFinite(value)) throw new Error(`${name} must be a number`);
  return value;
}
