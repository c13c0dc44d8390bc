/**
 * A tool's input JSON Schema as a one-line TypeScript type, the compact form search and describe
 * show. Only the subset that maps cleanly is rendered; anything else yields null so the caller
 * falls back to the longer Parameters listing rather than showing a misleading type.
 */

type Schema = Record<string, unknown>;

/** Keywords whose meaning a plain TypeScript type cannot carry. */
const UNRENDERABLE_KEYWORDS = ["if", "then", "else", "allOf", "not", "patternProperties", "additionalProperties"];
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
const LOCAL_REF = /^#\/(\$defs|definitions)\/([^/]+)$/;

export function renderShape(schema: unknown): string | null {
  if (!isSchema(schema)) return null;
  const definitions = collectDefinitions(schema);
  if (definitions === null) return null;

  // Aliases are handed out in order of first use, which is also the order they are printed.
  const aliases = new Map<string, string>();
  const taken = new Set<string>();
  let generated = 0;
  const aliasFor = (key: string): string => {
    const known = aliases.get(key);
    if (known !== undefined) return known;
    const name = key.slice(key.indexOf("/") + 1);
    let alias = IDENTIFIER.test(name) && !taken.has(name) ? name : `Definition${++generated}`;
    while (taken.has(alias)) alias = `Definition${++generated}`;
    aliases.set(key, alias);
    taken.add(alias);
    return alias;
  };

  const render = (node: unknown): string | null => {
    if (!isSchema(node) || hasUnrenderableKeyword(node)) return null;
    if ("$ref" in node) return renderRef(node.$ref, definitions, aliasFor);
    if (Array.isArray(node.enum)) return joinAll(node.enum.map(renderLiteral));
    if (Object.hasOwn(node, "const")) return renderLiteral(node.const);
    const variants = Array.isArray(node.anyOf) ? node.anyOf : Array.isArray(node.oneOf) ? node.oneOf : undefined;
    if (variants !== undefined) return variants.length === 0 ? null : joinAll(variants.map(render));
    if (node.type === "object" || node.properties !== undefined) return renderObject(node, render);
    if (node.type === "array") {
      if (node.items === undefined) return "unknown[]";
      const item = render(node.items);
      if (item === null) return null;
      return item.includes(" | ") ? `(${item})[]` : `${item}[]`;
    }
    if (Array.isArray(node.type)) return joinAll(node.type.map(renderTypeName));
    if (typeof node.type === "string") return renderTypeName(node.type);
    return "unknown";
  };

  const root = render(schema);
  if (root === null) return null;
  // Rendering a definition may reference further definitions; the Map iterator visits those too.
  const typeLines: string[] = [];
  for (const [key, alias] of aliases) {
    const body = render(definitions.get(key));
    if (body === null) return null;
    typeLines.push(`type ${alias} = ${body};`);
  }
  return typeLines.length > 0 ? `${typeLines.join("\n")}\n\n${root}` : root;
}

function isSchema(value: unknown): value is Schema {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** `$defs`/`definitions` keyed `<group>/<name>`; null when either is malformed. */
function collectDefinitions(schema: Schema): Map<string, Schema> | null {
  const definitions = new Map<string, Schema>();
  for (const group of ["$defs", "definitions"]) {
    const entries = schema[group];
    if (entries === undefined) continue;
    if (!isSchema(entries)) return null;
    for (const [name, definition] of Object.entries(entries)) {
      if (!isSchema(definition)) return null;
      definitions.set(`${group}/${decodePointerToken(name)}`, definition);
    }
  }
  return definitions;
}

function hasUnrenderableKeyword(schema: Schema): boolean {
  return UNRENDERABLE_KEYWORDS.some(
    // A closed object (`additionalProperties: false`) still has exactly the listed properties.
    (keyword) => Object.hasOwn(schema, keyword) && !(keyword === "additionalProperties" && schema[keyword] === false),
  );
}

function renderRef(ref: unknown, definitions: Map<string, Schema>, aliasFor: (key: string) => string): string | null {
  if (typeof ref !== "string") return null;
  const match = LOCAL_REF.exec(ref);
  if (!match) return null;
  const key = `${match[1]}/${decodePointerToken(match[2]!)}`;
  return definitions.has(key) ? aliasFor(key) : null;
}

function renderObject(schema: Schema, render: (node: unknown) => string | null): string | null {
  if (schema.properties === undefined) return "{}";
  if (!isSchema(schema.properties)) return null;
  const required = new Set(Array.isArray(schema.required) ? schema.required.filter((n) => typeof n === "string") : []);
  const members: string[] = [];
  for (const [name, property] of Object.entries(schema.properties)) {
    const type = render(property);
    if (type === null) return null;
    const key = IDENTIFIER.test(name) ? name : JSON.stringify(name);
    members.push(`${key}${required.has(name) ? "" : "?"}: ${type};`);
  }
  return members.length === 0 ? "{}" : `{ ${members.join(" ")} }`;
}

function renderTypeName(type: unknown): string | null {
  switch (type) {
    case "string":
      return "string";
    case "number":
    case "integer":
      return "number";
    case "boolean":
      return "boolean";
    case "null":
      return "null";
    case "object":
      return "{}";
    case "array":
      return "unknown[]";
    default:
      return null;
  }
}

function renderLiteral(value: unknown): string | null {
  if (value === null || typeof value === "string" || typeof value === "boolean") return JSON.stringify(value);
  return typeof value === "number" && Number.isFinite(value) ? String(value) : null;
}

function joinAll(parts: (string | null)[]): string | null {
  return parts.every((part): part is string => part !== null) ? parts.join(" | ") : null;
}

function decodePointerToken(token: string): string {
  return token.replace(/~1/g, "/").replace(/~0/g, "~");
}
