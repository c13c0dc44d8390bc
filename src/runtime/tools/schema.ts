import type { JsonSchema } from "../../providers/types.js";
import type { ToolTexts } from "../profile.js";
import type { RuntimeTool } from "../types.js";

/**
 * TypeBox-style schemas in pi's key order: `type, required, properties` on objects (required left out
 * when empty) and `type, [items], description` on properties, so our definitions serialize like pi's.
 */
export type PropertySpec = { type: "string" | "number" | "boolean"; description: string } | ArraySpec;
interface ArraySpec {
  type: "array";
  items: JsonSchema;
  description: string;
}

export function objectSchema(properties: Record<string, PropertySpec | JsonSchema>, required: string[]): JsonSchema {
  return required.length > 0 ? { type: "object", required, properties } : { type: "object", properties };
}

export function prop(type: "string" | "number" | "boolean", description: string): PropertySpec {
  return { type, description };
}

export function arrayProp(items: JsonSchema, description: string): PropertySpec {
  return { type: "array", items, description };
}

/** The profile's texts for a built-in tool, in the fields the runtime reads them from. */
export function toolHeader(
  name: string,
  t: ToolTexts,
): Pick<RuntimeTool, "name" | "label" | "description" | "promptSnippet" | "promptGuidelines"> {
  return { name, label: name, description: t.description, promptSnippet: t.snippet, promptGuidelines: t.guidelines };
}
