/**
 * Walks one skill root and lists the candidate skill files in load order (pi-runtime.md §4.2).
 * Only paths come out; reading and validating them is skill-file.ts's job.
 */
import { type Dirent, readdirSync, readFileSync, realpathSync, statSync } from "node:fs";
import { join, relative, sep } from "node:path";
import ignore, { type Ignore } from "ignore";
import { SKILL_FILE_NAME, type SkillScanMode } from "./types.js";

const IGNORE_FILE_NAMES = [".gitignore", ".ignore", ".fdignore"];

interface EntryKind {
  isFile: boolean;
  isDirectory: boolean;
}

interface Walk {
  root: string;
  mode: SkillScanMode;
  /** One matcher for the whole root: every visited directory's ignore files add to it. */
  matcher: Ignore;
  found: string[];
}

/** Candidate files under `root`, or none when it is missing or not a readable directory. */
export function scanSkillRoot(root: string, mode: SkillScanMode): string[] {
  const walk: Walk = { root, mode, matcher: ignore(), found: [] };
  visitDirectory(walk, root, new Set());
  return walk.found;
}

function visitDirectory(walk: Walk, dir: string, ancestors: ReadonlySet<string>): void {
  const entries = readSortedEntries(dir);
  const realDir = realpathOrNull(dir);
  // A symlink pointing back up the tree would otherwise be followed until the path gets too long.
  if (!entries || !realDir || ancestors.has(realDir)) return;
  const chain = new Set(ancestors).add(realDir);

  addIgnoreRules(walk, dir);

  const skillFile = entries.find((entry) => entry.name === SKILL_FILE_NAME);
  if (skillFile) {
    const path = join(dir, skillFile.name);
    if (resolveKind(skillFile, path)?.isFile && !walk.matcher.ignores(relativeTo(walk.root, path))) {
      walk.found.push(path);
      // A skill root owns everything below it: nested SKILL.md files stay invisible.
      return;
    }
  }

  const atRoot = dir === walk.root;
  for (const entry of entries) {
    if (entry.name.startsWith(".") || entry.name === "node_modules") continue;
    const path = join(dir, entry.name);
    const kind = resolveKind(entry, path);
    if (!kind) continue;
    const rel = relativeTo(walk.root, path);
    if (walk.matcher.ignores(kind.isDirectory ? `${rel}/` : rel)) continue;

    if (kind.isDirectory) {
      visitDirectory(walk, path, chain);
    } else if (kind.isFile && entry.name.endsWith(".md") && takesLooseFiles(walk.mode, atRoot)) {
      walk.found.push(path);
    }
  }
}

/** pi roots take loose .md files only at the top; agents roots take them only below it (observed). */
function takesLooseFiles(mode: SkillScanMode, atRoot: boolean): boolean {
  return mode === "pi" ? atRoot : !atRoot;
}

/** Entries in byte order (strcmp), so results do not depend on the filesystem or the locale. */
function readSortedEntries(dir: string): Dirent[] | null {
  try {
    return readdirSync(dir, { withFileTypes: true }).sort((a, b) =>
      Buffer.compare(Buffer.from(a.name), Buffer.from(b.name)),
    );
  } catch {
    return null;
  }
}

function realpathOrNull(path: string): string | null {
  try {
    return realpathSync(path);
  } catch {
    return null;
  }
}

/** Follows symlinks; null for a broken one. */
function resolveKind(entry: Dirent, path: string): EntryKind | null {
  if (!entry.isSymbolicLink()) return { isFile: entry.isFile(), isDirectory: entry.isDirectory() };
  try {
    const stats = statSync(path);
    return { isFile: stats.isFile(), isDirectory: stats.isDirectory() };
  } catch {
    return null;
  }
}

function relativeTo(root: string, path: string): string {
  return relative(root, path).split(sep).join("/");
}

function addIgnoreRules(walk: Walk, dir: string): void {
  const relDir = relativeTo(walk.root, dir);
  const prefix = relDir ? `${relDir}/` : "";
  for (const fileName of IGNORE_FILE_NAMES) {
    let text: string;
    try {
      text = readFileSync(join(dir, fileName), "utf8");
    } catch {
      continue; // absent (the usual case) or unreadable: no rules from this file
    }
    const patterns = text.split(/\r?\n/).flatMap((line) => {
      const pattern = prefixIgnorePattern(line, prefix);
      return pattern === null ? [] : [pattern];
    });
    walk.matcher.add(patterns);
  }
}

/**
 * Rewrites one ignore-file line so the shared matcher, which tests paths relative to the scan
 * root, applies it only below the directory that holds the file.
 */
export function prefixIgnorePattern(line: string, prefix: string): string | null {
  const trimmed = line.trim();
  if (trimmed === "" || trimmed.startsWith("#")) return null;
  const negated = line.startsWith("!");
  // `\!` and `\#` stay escaped: the matcher reads them as literal characters wherever they sit.
  let pattern = negated ? line.slice(1) : line;
  if (pattern.startsWith("/")) pattern = pattern.slice(1);
  return `${negated ? "!" : ""}${prefix}${pattern}`;
}
