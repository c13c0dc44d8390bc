/**
 * The instruction files an agent may inline into its requests (Claude Code's CLAUDE.md, Codex's
 * AGENTS.md, the Gemini CLI's GEMINI.md), read once when a capture starts from the folder the
 * recorded command runs in and each folder above it. The capture attributes a request's tokens to a
 * file where the file's text appears in a system part or a message (context-sources.ts), so the
 * records name the file and later commands need neither the files nor the folder.
 */
import { readFileSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { MIN_KNOWN_CHARS } from "./known-texts.js";

/** The names the agents read in each folder, their local and override variants with them. */
const INSTRUCTION_NAMES = [
  "CLAUDE.md",
  "CLAUDE.local.md",
  ".claude/CLAUDE.md",
  "AGENTS.md",
  "AGENTS.override.md",
  "GEMINI.md",
];

/** A file larger than this is not instructions an agent inlines whole; it is left out. */
const MAX_FILE_BYTES = 1024 * 1024;

export interface InstructionFile {
  /** Its path from the working folder (`CLAUDE.md`, `../AGENTS.md`), which names its source. */
  name: string;
  /** Its text without the blank space around it: agents inline it trimmed or wrapped. */
  text: string;
}

/** The instruction files of `cwd` and its parents that can be read, nearest folder first. */
export function readInstructionFiles(cwd: string): InstructionFile[] {
  const files: InstructionFile[] = [];
  for (let folder = cwd; ; folder = dirname(folder)) {
    for (const name of INSTRUCTION_NAMES) {
      const text = readSmallFile(join(folder, name))?.trim();
      if (text !== undefined && text.length >= MIN_KNOWN_CHARS)
        files.push({ name: relative(cwd, join(folder, name)), text });
    }
    if (dirname(folder) === folder) return files;
  }
}

/** A regular file's text, or undefined when it is missing, unreadable or too large. */
function readSmallFile(path: string): string | undefined {
  try {
    const stat = statSync(path);
    if (!stat.isFile() || stat.size > MAX_FILE_BYTES) return undefined;
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}
