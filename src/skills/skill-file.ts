/** Turns one markdown file into a skill, or into the diagnostics explaining why not (§4.3). */
import { readFileSync } from "node:fs";
import { basename, dirname } from "node:path";
import { parseFrontmatter } from "./frontmatter.js";
import { SKILL_FILE_NAME, type Skill, type SkillDiagnostic, type SkillSource } from "./types.js";
import { DESCRIPTION_REQUIRED, hasDescription, validateDescription, validateName } from "./validate.js";

export interface SkillFileResult {
  skill: Skill | null;
  diagnostics: SkillDiagnostic[];
}

export function loadSkillFile(filePath: string, source: SkillSource): SkillFileResult {
  let text: string;
  try {
    text = readFileSync(filePath, "utf8");
  } catch (error) {
    return failed(filePath, `could not read skill file: ${firstLine(error)}`);
  }
  let frontmatter: Record<string, unknown>;
  try {
    frontmatter = parseFrontmatter(text).frontmatter;
  } catch (error) {
    return failed(filePath, `invalid frontmatter: ${firstLine(error)}`);
  }

  const description = frontmatter.description;
  // A loose .md without a description is just a document that happens to sit in a skills folder.
  if (!hasDescription(description) && basename(filePath) !== SKILL_FILE_NAME) {
    return { skill: null, diagnostics: [] };
  }

  const baseDir = dirname(filePath);
  const name = typeof frontmatter.name === "string" && frontmatter.name !== "" ? frontmatter.name : basename(baseDir);
  const warnings = [
    ...(hasDescription(description) ? validateDescription(description) : [DESCRIPTION_REQUIRED]),
    ...validateName(name),
  ];
  const diagnostics = warnings.map((message): SkillDiagnostic => ({ type: "warning", message, path: filePath }));
  if (!hasDescription(description)) return { skill: null, diagnostics };

  return {
    skill: {
      name,
      description,
      filePath,
      baseDir,
      source,
      disableModelInvocation: frontmatter["disable-model-invocation"] === true,
    },
    diagnostics,
  };
}

function failed(filePath: string, message: string): SkillFileResult {
  return { skill: null, diagnostics: [{ type: "error", message, path: filePath }] };
}

/** The YAML library appends a code frame after the first line; a diagnostic wants one line. */
function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return (message.split("\n")[0] ?? "").replace(/:$/, "");
}
