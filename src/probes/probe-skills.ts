/**
 * A probe's skills: copied into its workspace, found there as pi finds them, and handed to the agent.
 * Both agents see the same staged files at the same paths; the runtime also gets the skills block
 * (or the load_skill model) as a hook, pi reads the staged paths from its command line.
 */
import { cpSync, existsSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, sep } from "node:path";
import type { SkillsHook } from "../runtime/agent.js";
import { extensionTexts } from "../runtime/load-profile.js";
import type { Profile } from "../runtime/profile.js";
import type { Extension } from "../runtime/types.js";
import { createDisclosure } from "../skills/disclosure/disclosure.js";
import { disclosureTextsSchema } from "../skills/disclosure/texts-schema.js";
import type { CatalogDirs, CatalogLayer } from "../skills/disclosure/types.js";
import { discoverSkills } from "../skills/discover.js";
import { expandSkillCommand } from "../skills/expand.js";
import { renderSkillsBlock } from "../skills/prompt-block.js";
import type { SkillDiagnostic, SkillLoadResult } from "../skills/types.js";
import type { RunObservation } from "./expect.js";
import type { Probe } from "./types.js";
import type { Workspace } from "./workspace.js";

/**
 * Skill paths (absolute, as the probe loaded them) are copied into the workspace so a skill's location,
 * which enters the prompt, does not depend on where the probe's folder sits.
 */
function stageSkills(paths: string[], probeFile: string, base: string): string[] {
  return paths.map((source) => {
    const target = join(base, "staged", stagedName(source, dirname(probeFile)));
    if (existsSync(source)) cpSync(source, target, { recursive: true, dereference: false, verbatimSymlinks: true });
    return target;
  });
}

/**
 * Where a skill goes under `staged/`: its path from the probe's folder without the `..` steps that
 * climb out of it (`../fixtures/skills/x` → `fixtures/skills/x`), so no folder name above the probe's
 * common ancestor with the skill enters the prompt: two clones named differently stage alike.
 */
function stagedName(source: string, probeDir: string): string {
  const steps = relative(probeDir, source).split(sep);
  const below = steps.slice(steps.findIndex((step) => step !== ".."));
  // Another drive (Windows) has no relative path: the file's own name is all that is left.
  return below.length === 0 || isAbsolute(below.join(sep)) ? basename(source) : join(...below);
}

/** The probe's `agent.skills` as staged in the workspace, and what discovery found with them there. */
export interface StagedSkills extends SkillLoadResult {
  /** Where each of `agent.skills` was copied, in order. */
  paths: string[];
}

/**
 * Stages the probe's skills and finds them (with the workspace's own skill folders) as pi does;
 * null when the probe turns skills off and names none, so there is nothing to find.
 */
export function stageAndFindSkills(probe: Probe, workspace: Workspace): StagedSkills | null {
  if (probe.agent.noSkills && probe.agent.skills.length === 0) return null;
  const paths = stageSkills(probe.agent.skills, probe.file, workspace.base);
  const found = discoverSkills({
    cwd: workspace.cwd,
    agentDir: workspace.agentDir,
    home: workspace.home,
    skillPaths: paths,
    noSkills: probe.agent.noSkills,
    trusted: probe.agent.trusted,
  });
  return { paths, ...found };
}

/** Skills by name → file path, for `{{skill:name}}` in the model script. */
export const skillFiles = (staged: StagedSkills | null): Map<string, string> =>
  new Map((staged?.skills ?? []).map((skill) => [skill.name, skill.filePath]));

/** The probe's skills as the runtime takes them. */
export interface ProbeSkills {
  hook?: SkillsHook;
  /** The load_skill model's extension (registers `load_skill`). */
  extension?: Extension;
  /** Filled at discovery; the load_skill model adds its dependency drops when its extension starts. */
  diagnostics: SkillDiagnostic[];
  /** Skills by name → file path, for `{{skill:name}}` in the model script. */
  paths: Map<string, string>;
  /** Names of the skills the model can see or expand, in order; asked after the run. */
  loaded(): string[];
}

/**
 * The load_skill model: each `agent.skillLayers` folder is copied to its layer's place in the
 * workspace (builtin apart, user under the agent dir, project under cwd's .pi), then catalogued.
 */
function disclosureSkills(profile: Profile, probe: Probe, workspace: Workspace): ProbeSkills {
  const places: Record<CatalogLayer, string> = {
    builtin: join(workspace.base, "builtin-skills"),
    user: join(workspace.agentDir, "skills"),
    project: join(workspace.cwd, ".pi", "skills"),
  };
  const dirs: CatalogDirs = {};
  for (const [layer, source] of Object.entries(probe.agent.skillLayers ?? {}) as [CatalogLayer, string][]) {
    cpSync(source, places[layer], {
      recursive: true,
      verbatimSymlinks: true,
    });
    dirs[layer] = places[layer];
  }
  const disclosure = createDisclosure({
    dirs,
    texts: extensionTexts(profile, "loadSkill", disclosureTextsSchema),
    cwd: workspace.cwd,
    model: probe.model.id,
  });
  return {
    hook: { block: disclosure.block, expand: (text) => text, environment: disclosure.environment },
    extension: disclosure.extension,
    diagnostics: disclosure.diagnostics,
    paths: new Map(disclosure.found.map((skill) => [skill.meta.name, skill.entryPath])),
    loaded: () => disclosure.catalog().map((skill) => skill.meta.name),
  };
}

/** The runtime's skills: the load_skill model, or the staged skills as the skills block and `/skill:` expansion. */
export function runtimeSkills(profile: Profile, probe: Probe, workspace: Workspace): ProbeSkills {
  if (probe.agent.skillMode === "load_skill") return disclosureSkills(profile, probe, workspace);
  const staged = stageAndFindSkills(probe, workspace);
  if (!staged) return { diagnostics: [], paths: new Map(), loaded: () => [] };
  const { skills, diagnostics } = staged;
  return {
    diagnostics,
    paths: skillFiles(staged),
    loaded: () => skills.map((skill) => skill.name),
    hook: {
      block: (active) => renderSkillsBlock(skills, active, profile.skills),
      expand: (text) => expandSkillCommand(text, skills),
    },
  };
}

/** Discovery's outcome with workspace-relative paths, so a probe can state it independently of the temp folder. */
export function skillsObservation(
  loaded: string[],
  diagnostics: SkillDiagnostic[],
  base: string,
): RunObservation["skills"] {
  const rel = (path: string) => relative(base, path).split(sep).join("/");
  return {
    loaded,
    diagnostics: diagnostics.map((d) => ({
      type: d.type,
      message: d.message,
      path: rel(d.path),
      winner: d.collision && rel(d.collision.winnerPath),
      loser: d.collision && rel(d.collision.loserPath),
    })),
  };
}
