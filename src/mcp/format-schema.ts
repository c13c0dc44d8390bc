/**
 * A JSON Schema as an indented property listing: the "Parameters" fallback when a schema has no
 * TypeScript shape, and the "Expected parameters" hint after a failed call.
 */

type Schema = Record<string, unknown>;

/** Constraint keywords shown after the description, in this order. */
const CONSTRAINT_KEYS = ["minLength", "maxLength", "minimum", "maximum", "minItems", "maxItems", "format", "pattern"];

export function formatSchema(schema: unknown, indent = 2): string {
  const pad = " ".repeat(indent);
  if (!isSchema(schema)) return `${pad}(no schema)`;

  if (schema.type === "object" && isSchema(schema.properties)) {
    if (Object.keys(schema.properties).length === 0) return `${pad}(no parameters)`;
    return propertyLines(schema, pad).join("\n");
  }
  const nested = childLines(schema, pad);
  if (nested.length > 0) return nested.join("\n");
  const type = describeType(schema);
  return type ? `${pad}(${type})` : `${pad}(complex schema)`;
}

function isSchema(value: unknown): value is Schema {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function requiredNames(schema: Schema): string[] {
  return Array.isArray(schema.required) ? schema.required.filter((n): n is string => typeof n === "string") : [];
}

function propertyLines(schema: Schema, pad: string): string[] {
  const required = requiredNames(schema);
  return Object.entries(schema.properties as Schema).flatMap(([name, property]) =>
    formatProperty(name, property, required.includes(name), pad),
  );
}

function formatProperty(name: string, schema: unknown, required: boolean, pad: string): string[] {
  if (!isSchema(schema)) return [`${pad}${name}${required ? " *required*" : ""}`];
  const parts = [`${pad}${name}`];
  const type = describeType(schema);
  if (type) parts.push(`(${type})`);
  if (required) parts.push("*required*");
  parts.push(...annotations(schema));
  return [parts.join(" "), ...childLines(schema, `${pad}  `)];
}

/** What sits under a property: its union variants, its array items and its own properties. */
function childLines(schema: Schema, pad: string): string[] {
  const lines: string[] = [];
  for (const keyword of ["anyOf", "oneOf"] as const) {
    const variants = schema[keyword];
    if (Array.isArray(variants)) lines.push(...variantLines(keyword, variants, pad));
  }
  if (schema.items !== undefined) lines.push(...formatProperty("items", schema.items, false, pad));
  if (isSchema(schema.properties)) lines.push(...propertyLines(schema, pad));
  return lines;
}

function variantLines(keyword: string, variants: unknown[], pad: string): string[] {
  const lines = [`${pad}${keyword}:`];
  for (const variant of variants) {
    if (!isSchema(variant)) {
      lines.push(`${pad}  - ${JSON.stringify(variant)}`);
      continue;
    }
    lines.push([`${pad}  - ${describeType(variant) || "schema"}`, ...annotations(variant)].join(" "));
    lines.push(...childLines(variant, `${pad}    `));
  }
  return lines;
}

function describeType(schema: Schema): string {
  if (Object.hasOwn(schema, "const")) return `const ${JSON.stringify(schema.const)}`;
  if (Array.isArray(schema.enum)) return `enum: ${schema.enum.map((value) => JSON.stringify(value)).join(", ")}`;
  if (Array.isArray(schema.type)) return schema.type.map(String).join(" | ");
  if (schema.type) return String(schema.type);
  if (isSchema(schema.properties)) return "object";
  if (schema.items !== undefined) return "array";
  return "";
}

function annotations(schema: Schema): string[] {
  const parts: string[] = [];
  if (typeof schema.description === "string" && schema.description) parts.push(`- ${schema.description}`);
  for (const key of CONSTRAINT_KEYS) {
    if (schema[key] !== undefined) parts.push(`[${key}: ${JSON.stringify(schema[key])}]`);
  }
  if (schema.default !== undefined) parts.push(`[default: ${JSON.stringify(schema.default)}]`);
  return parts;
}
