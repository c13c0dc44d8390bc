/**
 * A tool definition as one of the five wire APIs sends it, reduced to what a profile holds: name,
 * description, parameter schema and each parameter's description.
 */
import type { JsonSchema } from "../providers/types.js";

export interface SentTool {
  name: string;
  description: string;
  parameters: JsonSchema;
}

/**
 * Chat completions nest the tool under `function`, Bedrock's Converse under `toolSpec` (its schema in
 * `inputSchema.json`); Responses, Anthropic Messages and a Gemini function declaration keep it flat,
 * Anthropic calling the schema `input_schema`, Gemini `parametersJsonSchema` (or `parameters`, its
 * OpenAPI subset).
 */
export function sentTool(json: string): SentTool {
  const definition = JSON.parse(json) as Record<string, unknown>;
  const nested = definition.function ?? definition.toolSpec;
  const tool = (typeof nested === "object" && nested !== null ? nested : definition) as Record<string, unknown>;
  const converseSchema = (tool.inputSchema as { json?: unknown } | undefined)?.json;
  const parameters = (tool.parameters ??
    tool.input_schema ??
    tool.parametersJsonSchema ??
    converseSchema ??
    {}) as JsonSchema;
  return {
    name: String(tool.name),
    description: typeof tool.description === "string" ? tool.description : "",
    parameters,
  };
}

/**
 * Every property description in a schema by property name, nested ones too (edit's `edits[].oldText`),
 * in the order they appear: the flat map a profile keeps per tool.
 */
export function parameterDescriptions(schema: unknown, into: Record<string, string> = {}): Record<string, string> {
  if (Array.isArray(schema)) {
    for (const item of schema) parameterDescriptions(item, into);
    return into;
  }
  if (typeof schema !== "object" || schema === null) return into;
  const node = schema as Record<string, unknown>;
  const properties = node.properties as Record<string, unknown> | undefined;
  for (const [name, property] of Object.entries(properties ?? {})) {
    const description = (property as { description?: unknown } | null)?.description;
    if (typeof description === "string" && !(name in into)) into[name] = description;
    parameterDescriptions(property, into);
  }
  for (const key of ["items", "anyOf", "oneOf", "allOf"]) parameterDescriptions(node[key], into);
  return into;
}
