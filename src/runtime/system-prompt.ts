import type { Profile, PromptSections, PromptTemplate } from "./profile.js";
import type { RuntimeTool } from "./types.js";

export interface SystemPromptInput {
  cwd: string;
  /** The folder `{PKG}` stands for in the docs section. */
  packageDir: string;
  /** `--append-system-prompt` texts, in order. */
  append?: string[];
  /** Project context files (AGENTS.md …) as path and raw content. */
  contextFiles?: { path: string; content: string }[];
  /** The skills block, already rendered (it starts with a blank line, or is empty). */
  skillsBlock?: string;
  /** `--system-prompt`: replaces everything before `{APPEND}`. */
  custom?: string;
  /** What a template's `{DATE}` becomes (default: today, `YYYY-MM-DD`); pi's own layout has no date. */
  date?: string;
}

const SEARCH_TOOLS = ["grep", "find", "ls"];

function collapse(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

function toolLines(tools: RuntimeTool[]): string[] {
  const lines = tools
    .filter((t) => t.promptSnippet && collapse(t.promptSnippet) !== "")
    .map((t) => `- ${t.name}: ${collapse(t.promptSnippet!)}`);
  return lines.length > 0 ? lines : ["(none)"];
}

function guidelines(profile: Profile, tools: RuntimeTool[]): string[] {
  const names = tools.map((t) => t.name);
  const lines: string[] = [];
  const hasBash = names.includes("bash");
  const hasPowershell = names.includes("powershell");
  // The shell is the only way to look around when no search tool is active.
  if ((hasBash || hasPowershell) && !SEARCH_TOOLS.some((n) => names.includes(n))) {
    const variants = profile.systemPrompt.fileOpsGuideline;
    lines.push(hasBash && hasPowershell ? variants.both : hasBash ? variants.bash : variants.powershell);
  }
  for (const tool of tools) lines.push(...(tool.promptGuidelines ?? []));
  lines.push(...profile.systemPrompt.closingGuidelines);
  // An empty text stands for a line the profile does not have (an imported variant never seen).
  const kept = lines.map((line) => line.trim()).filter((line) => line !== "");
  return [...new Set(kept)].map((line) => `- ${line}`);
}

function appendSection(append: string[] | undefined): string {
  return append && append.length > 0 ? `\n\n${append.join("\n\n")}` : "";
}

function contextSection(files: SystemPromptInput["contextFiles"]): string {
  if (!files || files.length === 0) return "";
  const body = files
    .map((f) => `<project_instructions path="${f.path}">\n${f.content}\n</project_instructions>\n\n`)
    .join("");
  return `\n\n<project_context>\n\nProject-specific instructions and guidelines:\n\n${body}</project_context>\n`;
}

/** The system prompt in pi's section order, rebuilt from scratch whenever the active set changes. */
export function buildSystemPrompt(profile: Profile, activeTools: RuntimeTool[], input: SystemPromptInput): string {
  if (input.custom !== undefined)
    return `${input.custom}${tail(input)}\nCurrent working directory: ${forwardSlashes(input.cwd)}\n`;
  const sp = profile.systemPrompt;
  if ("template" in sp) return fillTemplate(sp, profile, activeTools, input);
  return sectionedPrompt(sp, profile, activeTools, input);
}

/** pi shows the cwd with `/` separators on every platform. */
function forwardSlashes(path: string): string {
  return path.replace(/\\/g, "/");
}

function tail(input: SystemPromptInput): string {
  return `${appendSection(input.append)}${contextSection(input.contextFiles)}${input.skillsBlock ?? ""}`;
}

function sectionedPrompt(
  sp: PromptSections,
  profile: Profile,
  activeTools: RuntimeTool[],
  input: SystemPromptInput,
): string {
  const docs = [sp.docsHeader, ...sp.docsBullets.map((b) => `- ${b.replaceAll("{PKG}", input.packageDir)}`)].join("\n");
  return (
    `${sp.intro}\n\n` +
    `Available tools:\n${toolLines(activeTools).join("\n")}\n\n` +
    `${sp.customTools}\n\n` +
    `Guidelines:\n${guidelines(profile, activeTools).join("\n")}\n\n` +
    docs +
    tail(input) +
    `\nCurrent working directory: ${forwardSlashes(input.cwd)}`
  );
}

/** What a template may hold besides literal text; `profile import` writes them. */
export const TEMPLATE_PLACEHOLDERS = [
  "TOOLS",
  "GUIDELINES",
  "PKG",
  "APPEND",
  "CONTEXT",
  "SKILLS",
  "CWD",
  "DATE",
] as const;
const PLACEHOLDER = new RegExp(`\\{(${TEMPLATE_PLACEHOLDERS.join("|")})\\}`, "g");

/** A template's lines joined, each placeholder filled in one pass (a filled-in text is never read again). */
function fillTemplate(
  sp: PromptTemplate,
  profile: Profile,
  activeTools: RuntimeTool[],
  input: SystemPromptInput,
): string {
  const values: Record<(typeof TEMPLATE_PLACEHOLDERS)[number], () => string> = {
    TOOLS: () => toolLines(activeTools).join("\n"),
    GUIDELINES: () => guidelines(profile, activeTools).join("\n"),
    PKG: () => input.packageDir,
    APPEND: () => appendSection(input.append),
    CONTEXT: () => contextSection(input.contextFiles),
    SKILLS: () => input.skillsBlock ?? "",
    CWD: () => forwardSlashes(input.cwd),
    DATE: () => input.date ?? new Date().toISOString().slice(0, 10),
  };
  return sp.template.join("\n").replace(PLACEHOLDER, (_, name: keyof typeof values) => values[name]());
}
