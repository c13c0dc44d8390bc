import { z } from "zod";
import { inputError } from "../errors.js";
import { readInputFile } from "../files/input-file.js";
import { dottedPath, parseInput } from "../validate.js";
import { DEFAULT_PROFILE_PATH, type Profile, type SystemPromptTexts, type ToolTexts } from "./profile.js";

/**
 * Reads a profile (see profiles/default.json) and checks every text the runtime uses, so a
 * missing sentence is an input error naming the profile and the field, not a broken prompt.
 * Kept apart from profile.ts, whose types and paths commands use without loading zod.
 */

const text = z.string({ error: "expected a string" });
const texts = z.array(text, { error: "expected a list of strings" });
const mapping = <T extends z.core.$ZodLooseShape>(shape: T) => z.object(shape, { error: "expected a mapping" });

const toolTexts: z.ZodType<ToolTexts> = mapping({
  description: text,
  snippet: text.optional(),
  guidelines: texts.optional(),
  parameters: z.record(z.string(), text, { error: "expected a mapping of parameter names to texts" }),
  schema: z.record(z.string(), z.unknown(), { error: "expected a JSON Schema object" }).optional(),
});

/** The texts of pi's sections, needed only when the profile gives no whole-prompt template. */
const SECTION_FIELDS = ["intro", "customTools", "docsHeader", "docsBullets"] as const;

const systemPromptSchema = mapping({
  template: texts.optional(),
  intro: text.optional(),
  customTools: text.optional(),
  fileOpsGuideline: mapping({ bash: text, powershell: text, both: text }),
  closingGuidelines: texts,
  docsHeader: text.optional(),
  docsBullets: texts.optional(),
})
  .superRefine((prompt, ctx) => {
    if (prompt.template !== undefined) return;
    for (const field of SECTION_FIELDS)
      if (prompt[field] === undefined)
        ctx.addIssue({
          code: "custom",
          path: [field],
          message: `expected ${field === "docsBullets" ? "a list of strings" : "a string"} (the sections are needed when there is no template)`,
        });
  })
  // The refinement above is what makes the result one of the two forms.
  .transform((prompt) => prompt as SystemPromptTexts);

/** The built-in tools every profile describes; others (a custom tool's texts) are optional. */
const BUILTIN_TOOLS = ["read", "bash", "powershell", "edit", "write", "grep", "find", "ls"] as const;

const profileSchema = mapping({
  name: text,
  systemPrompt: systemPromptSchema,
  tools: mapping(Object.fromEntries(BUILTIN_TOOLS.map((tool) => [tool, toolTexts]))).catchall(toolTexts),
  skills: mapping({ intro: text, useRead: text, useBash: text, paths: text }),
  extensions: z.record(z.string(), z.record(z.string(), z.unknown(), { error: "expected a mapping" })).default({}),
});

export function loadProfile(path = DEFAULT_PROFILE_PATH): Profile {
  const text = readInputFile(path, "profile").toString("utf8");
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw inputError(path, undefined, `expected a readable JSON profile (${(error as Error).message})`);
  }
  return { file: path, ...parseInput(profileSchema, parsed, path) };
}

/**
 * One extension's texts (`extensions.<name>`), checked by the schema the extension owns, so the
 * runtime needs to know nothing of MCP or load_skill to hand them over typed.
 */
export function extensionTexts<T>(profile: Profile, name: string, schema: z.ZodType<T>): T {
  return parseInput(schema, profile.extensions[name], profile.file, (path) =>
    dottedPath(["extensions", name, ...path]),
  );
}
