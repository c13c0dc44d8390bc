import { z } from "zod";
import type { McpTexts } from "./runtime-context.js";

/** What the profile's `extensions.mcp` must hold: every sentence the adapter's tools show the model. */

const text = z.string({ error: "expected a string" });
const mapping = <T extends z.core.$ZodLooseShape>(shape: T) => z.object(shape, { error: "expected a mapping" });

export const mcpTextsSchema: z.ZodType<McpTexts> = mapping({
  proxy: mapping({
    snippet: text,
    intro: text,
    searchModeLine: text,
    disabledLine: text,
    usage: z.array(text, { error: "expected a list of strings" }),
    precedence: text,
    parameters: z.record(z.string(), text, { error: "expected a mapping of parameter names to texts" }),
    actionUnsupported: text,
    schema: z.record(z.string(), z.unknown(), { error: "expected a JSON Schema object" }).optional(),
  }),
  namespace: mapping({ snippet: text, description: text, parameters: mapping({ tool: text, args: text }) }),
  direct: mapping({ fallbackSnippet: text }),
  script: mapping({
    snippet: text,
    description: text,
    parameters: mapping({ code: text, timeoutMs: text }),
    noOutput: text,
    timedOut: text,
    failed: text,
  }),
});
