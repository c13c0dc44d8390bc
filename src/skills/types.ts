/** The nouns of pi-style skills: where they come from, what a loaded one is, what went wrong. */

/** The file that makes a directory a skill root. */
export const SKILL_FILE_NAME = "SKILL.md";

/**
 * How a root is walked (pi-runtime.md §4.2): "pi" roots take loose `.md` files only at the root,
 * "agents" roots skip root files and take `.md` files in subdirectories.
 */
export type SkillScanMode = "pi" | "agents";

/** Who put a root on the list; decides trust gating and, through list order, who wins a name. */
export type SkillScope = "project" | "user" | "cli";

/** One entry of the path list that discovery walks, in load order. */
export interface SkillSource {
  scope: SkillScope;
  mode: SkillScanMode;
  /** Absolute path of the root directory (or, for `--skill`, possibly a single file). */
  root: string;
}

/** A loaded skill: metadata only — the body is read on demand (`readSkillBody`). */
export interface Skill {
  name: string;
  description: string;
  /** The file as reached by the scan (through symlinks, not resolved). */
  filePath: string;
  /** The directory holding `filePath`; relative references in the skill resolve against it. */
  baseDir: string;
  source: SkillSource;
  /** `disable-model-invocation: true`: loaded and expandable by `/skill:`, but not in the prompt block. */
  disableModelInvocation: boolean;
}

export interface SkillCollision {
  resourceType: "skill";
  name: string;
  winnerPath: string;
  loserPath: string;
}

export interface SkillDiagnostic {
  /** "error" is a file that could not be read or parsed; "warning" never blocks on its own. */
  type: "warning" | "error" | "collision";
  message: string;
  path: string;
  collision?: SkillCollision;
}

export interface SkillLoadResult {
  skills: Skill[];
  diagnostics: SkillDiagnostic[];
}
