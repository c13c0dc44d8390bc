/**
 * Builds pi's skill path list and loads it in order (pi-runtime.md §4.1, §4.3, §4.4).
 *
 * Not supported: settings `packages` and `skills` entries and `-e` extension-package skills; the
 * runtime configures skills through `--skill` paths only.
 */
import { existsSync, realpathSync, type Stats, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { scanSkillRoot } from "./scan.js";
import { loadSkillFile } from "./skill-file.js";
import type { Skill, SkillDiagnostic, SkillLoadResult, SkillSource } from "./types.js";

export interface DiscoverSkillsOptions {
  cwd: string;
  agentDir: string;
  home: string;
  /** `--skill` values: files or directories, relative to cwd; `~` means home. */
  skillPaths?: string[];
  /** `--no-skills`: drops the discovered roots, keeps `skillPaths`. */
  noSkills?: boolean;
  /** Project trust; untrusted projects contribute no skills. Defaults to false, as pi in `-p`. */
  trusted?: boolean;
  /** Where the `.agents/skills` ancestor walk stops; found by looking for `.git` when omitted. */
  gitRoot?: string;
}

export function discoverSkills(opts: DiscoverSkillsOptions): SkillLoadResult {
  const loader = new SkillCollector();
  for (const source of skillSources(opts)) {
    for (const filePath of candidateFiles(source, loader.diagnostics)) loader.add(filePath, source);
  }
  return { skills: loader.skills, diagnostics: loader.diagnostics };
}

/** The roots in load order; earlier roots win name collisions. */
export function skillSources(opts: DiscoverSkillsOptions): SkillSource[] {
  const cwd = resolve(opts.cwd);
  const home = resolve(opts.home);
  const discovered: SkillSource[] = [];
  if (!opts.noSkills) {
    if (opts.trusted) {
      discovered.push({ scope: "project", mode: "pi", root: join(cwd, ".pi", "skills") });
      for (const root of ancestorAgentsSkillDirs(cwd, home, opts.gitRoot)) {
        discovered.push({ scope: "project", mode: "agents", root });
      }
    }
    discovered.push({ scope: "user", mode: "pi", root: join(resolve(opts.agentDir), "skills") });
    discovered.push({ scope: "user", mode: "agents", root: userAgentsSkillsDir(home) });
  }
  // pi lists --skill paths last, so they lose name collisions against everything discovered.
  const explicit = (opts.skillPaths ?? []).map(
    (path): SkillSource => ({ scope: "cli", mode: "pi", root: resolve(cwd, expandHome(path, home)) }),
  );
  return [...discovered, ...explicit];
}

function userAgentsSkillsDir(home: string): string {
  return join(home, ".agents", "skills");
}

/**
 * `.agents/skills` in cwd and each parent up to the git root (the filesystem root outside a
 * repo). The home directory's copy is skipped here: it is a user root, never a project one.
 */
function ancestorAgentsSkillDirs(cwd: string, home: string, gitRoot: string | undefined): string[] {
  const stopAt = gitRoot === undefined ? findGitRoot(cwd) : resolve(gitRoot);
  const userDir = userAgentsSkillsDir(home);
  const dirs: string[] = [];
  for (let dir = cwd; ; dir = dirname(dir)) {
    const candidate = join(dir, ".agents", "skills");
    if (candidate !== userDir) dirs.push(candidate);
    if (dir === stopAt || dirname(dir) === dir) return dirs;
  }
}

function findGitRoot(start: string): string | null {
  for (let dir = start; ; dir = dirname(dir)) {
    if (existsSync(join(dir, ".git"))) return dir;
    if (dirname(dir) === dir) return null;
  }
}

function expandHome(path: string, home: string): string {
  if (path === "~") return home;
  return path.startsWith("~/") ? join(home, path.slice(2)) : path;
}

/** Discovered roots are optional and scanned silently; a `--skill` path that is unusable warns. */
function candidateFiles(source: SkillSource, diagnostics: SkillDiagnostic[]): string[] {
  if (source.scope !== "cli") return scanSkillRoot(source.root, source.mode);
  let stats: Stats;
  try {
    stats = statSync(source.root);
  } catch {
    diagnostics.push({ type: "warning", message: "skill path does not exist", path: source.root });
    return [];
  }
  if (stats.isDirectory()) return scanSkillRoot(source.root, source.mode);
  if (stats.isFile() && source.root.endsWith(".md")) return [source.root];
  diagnostics.push({ type: "warning", message: "skill path is not a markdown file", path: source.root });
  return [];
}

/** Loads files once each (by realpath) and keeps the first skill of every name. */
class SkillCollector {
  readonly skills: Skill[] = [];
  readonly diagnostics: SkillDiagnostic[] = [];
  private readonly seenFiles = new Set<string>();
  private readonly byName = new Map<string, Skill>();

  add(filePath: string, source: SkillSource): void {
    const realPath = realpathOrSelf(filePath);
    // The same file reached twice (a symlink, overlapping roots) is one skill, not a collision.
    if (this.seenFiles.has(realPath)) return;
    this.seenFiles.add(realPath);

    const { skill, diagnostics } = loadSkillFile(filePath, source);
    this.diagnostics.push(...diagnostics);
    if (!skill) return;

    const winner = this.byName.get(skill.name);
    if (winner) {
      this.diagnostics.push({
        type: "collision",
        message: `name "${skill.name}" collision`,
        path: skill.filePath,
        collision: { resourceType: "skill", name: skill.name, winnerPath: winner.filePath, loserPath: skill.filePath },
      });
      return;
    }
    this.byName.set(skill.name, skill);
    this.skills.push(skill);
  }
}

function realpathOrSelf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
