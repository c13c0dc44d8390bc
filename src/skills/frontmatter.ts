/** Splits a markdown file into YAML frontmatter and body (pi-runtime.md §4.3). */
import { readFileSync } from "node:fs";
import { parse } from "yaml";

export interface SplitMarkdown {
  /** The YAML text between the fences, or null when the file has no frontmatter. */
  yaml: string | null;
  body: string;
}

export interface ParsedMarkdown {
  frontmatter: Record<string, unknown>;
  body: string;
}

const OPENING_FENCE = "---";
const CLOSING_FENCE = "\n---";

function normalizeText(text: string): string {
  const withoutBom = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  return withoutBom.replace(/\r\n/g, "\n").replace(/\r/g, "\n");
}

/** Separates the frontmatter text from the trimmed body without interpreting the YAML. */
export function splitFrontmatter(text: string): SplitMarkdown {
  const normalized = normalizeText(text);
  if (!normalized.startsWith(OPENING_FENCE)) return { yaml: null, body: normalized.trim() };
  // The search starts after the opening fence so `---` alone on line one is not its own end.
  const end = normalized.indexOf(CLOSING_FENCE, OPENING_FENCE.length);
  if (end === -1) return { yaml: null, body: normalized.trim() };
  return {
    yaml: normalized.slice(OPENING_FENCE.length + 1, end),
    body: normalized.slice(end + CLOSING_FENCE.length).trim(),
  };
}

/**
 * Parses the frontmatter as YAML. Throws the YAML library's error on bad syntax, and an Error
 * when the frontmatter is YAML but not a mapping; callers turn either into a diagnostic.
 */
export function parseFrontmatter(text: string): ParsedMarkdown {
  const { yaml, body } = splitFrontmatter(text);
  if (yaml === null) return { frontmatter: {}, body };
  const parsed: unknown = parse(yaml);
  if (parsed === null || parsed === undefined) return { frontmatter: {}, body };
  if (typeof parsed !== "object" || Array.isArray(parsed)) {
    throw new Error("frontmatter is not a YAML mapping of fields");
  }
  return { frontmatter: parsed as Record<string, unknown>, body };
}

/** The skill file minus its frontmatter, trimmed: what `/skill:` expansion inlines. */
export function readSkillBody(filePath: string): string {
  return splitFrontmatter(readFileSync(filePath, "utf8")).body;
}
