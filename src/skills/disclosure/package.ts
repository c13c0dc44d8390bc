/**
 * Parses one skill of the load_skill model: SKILL.md (frontmatter metadata + SOP body) and, for a
 * directory skill, its optional tools.json. Every rule failure throws an Error whose message the
 * catalog turns into a warning for that one skill.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve, sep } from "node:path";
import { parseFrontmatter } from "../frontmatter.js";
import type { CatalogLayer, DisclosedSkill, DisclosedSkillMeta, SkillToolSpec } from "./types.js";

const TOOLS_FILE_NAME = "tools.json";

export function parseSkillPackage(entryPath: string, layer: CatalogLayer): DisclosedSkill {
  const { meta, body } = parseSkillText(readFileSync(entryPath, "utf8"));
  const rootDir = dirname(entryPath);
  const toolsPath = join(rootDir, TOOLS_FILE_NAME);
  const tools = existsSync(toolsPath) ? parseToolsFile(readFileSync(toolsPath, "utf8"), rootDir) : [];
  return { meta, body, entryPath, rootDir, layer, tools };
}

/** Metadata and body of a SKILL.md text; empty name, description or body is rejected. */
export function parseSkillText(text: string): { meta: DisclosedSkillMeta; body: string } {
  const { frontmatter, body } = parseFrontmatter(text);
  const name = requiredString(frontmatter.name, "name");
  const description = requiredString(frontmatter.description, "description");
  if (body === "") throw new Error("body is empty");
  const tools = frontmatter.tools ?? [];
  if (!Array.isArray(tools) || !tools.every((t) => typeof t === "string" && t !== "")) {
    throw new Error("tools must be a list of tool names");
  }
  return {
    meta: {
      name,
      description,
      tools: tools as string[],
      mode: optionalString(frontmatter.mode, "mode"),
      history: optionalString(frontmatter.history, "history"),
      model: optionalString(frontmatter.model, "model"),
    },
    body,
  };
}

function requiredString(value: unknown, field: string): string {
  if (typeof value !== "string" || value.trim() === "") throw new Error(`${field} is required`);
  return value.trim();
}

function optionalString(value: unknown, field: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") throw new Error(`${field} must be a string`);
  return value;
}

/** tools.json: a list of `{name, description, inputSchema, command}`. */
export function parseToolsFile(text: string, root: string): SkillToolSpec[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new Error(`${TOOLS_FILE_NAME} is not valid JSON (${(error as Error).message})`);
  }
  if (!Array.isArray(parsed)) throw new Error(`${TOOLS_FILE_NAME} must hold a list of tools`);
  return parsed.map((entry, i) => parseToolSpec(entry, root, `${TOOLS_FILE_NAME}[${i}]`));
}

function parseToolSpec(entry: unknown, root: string, where: string): SkillToolSpec {
  if (!entry || typeof entry !== "object" || Array.isArray(entry)) throw new Error(`${where} must be an object`);
  const spec = entry as Record<string, unknown>;
  const name = requiredString(spec.name, `${where}.name`);
  const description = requiredString(spec.description, `${where}.description`);
  const schema = spec.inputSchema;
  if (
    !schema ||
    typeof schema !== "object" ||
    Array.isArray(schema) ||
    (schema as { type?: unknown }).type !== "object"
  ) {
    throw new Error(`${where}.inputSchema must be a JSON Schema of type "object"`);
  }
  const command = spec.command;
  if (
    !Array.isArray(command) ||
    command.length === 0 ||
    !command.every((part) => typeof part === "string" && part !== "")
  ) {
    throw new Error(`${where}.command must be a non-empty list of strings`);
  }
  if (escapesRoot(command[0] as string, root))
    throw new Error(`${where}.command[0] leaves the skill folder through ".."`);
  return { name, description, inputSchema: schema as Record<string, unknown>, command: command as string[], root };
}

/**
 * A program path with a `..` segment must still land inside the skill root. Bare names (`node`)
 * and absolute paths without `..` are looked up as usual; the runtime's own limits still apply.
 */
export function escapesRoot(program: string, root: string): boolean {
  if (!program.split(/[\\/]/).includes("..")) return false;
  const target = resolve(root, program);
  return target !== root && !target.startsWith(root.endsWith(sep) ? root : root + sep);
}
