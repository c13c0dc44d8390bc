/**
 * Texts of the user's the capture looks for in each request, each under the source it stands for:
 * instruction files (instruction-files.ts) and skills (their bodies when loaded, their descriptions
 * in the skills index). Built once when `record` or `proxy` starts, handed to the capture worker.
 */
export interface KnownText {
  source: string;
  text: string;
}

/** A skill as the capture needs it; skills/agent-skills.ts reads them. */
export interface SkillText {
  name: string;
  description: string;
  body: string;
}

/** Shorter texts could appear in a request by chance, so they are not looked for. */
export const MIN_KNOWN_CHARS = 16;

/**
 * The texts in the order they are taken out: skills' bodies and instruction files first (a body or a
 * file may quote a description), then the descriptions.
 */
export function knownTexts(
  files: readonly { name: string; text: string }[],
  skills: readonly SkillText[],
): KnownText[] {
  return [
    ...skills.map((skill) => ({ source: `skill:${skill.name}`, text: skill.body })),
    ...files.map((file) => ({ source: `instructions:${file.name}`, text: file.text })),
    ...skills.map((skill) => ({ source: `skill-index:${skill.name}`, text: skill.description.trim() })),
  ].filter((known) => known.text.length >= MIN_KNOWN_CHARS);
}
