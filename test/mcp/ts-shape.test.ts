import { describe, expect, it } from "vitest";
import { renderShape } from "../../src/mcp/ts-shape.js";

const object = (properties: Record<string, unknown>, required: string[] = []) => ({
  type: "object",
  properties,
  required,
});

describe("renderShape: the verified examples", () => {
  it("marks properties optional unless required", () => {
    expect(renderShape(object({ query: { type: "string" }, limit: { type: "integer" } }, ["query"]))).toBe(
      "{ query: string; limit?: number; }",
    );
  });

  it("renders enum and const as literals", () => {
    const schema = object(
      { format: { type: "string", enum: ["png", "jpeg"] }, n: { const: 3 }, flag: { enum: [true, null] } },
      ["format"],
    );
    expect(renderShape(schema)).toBe('{ format: "png" | "jpeg"; n?: 3; flag?: true | null; }');
  });

  it("renders arrays, parenthesizing union items", () => {
    const schema = object({
      tags: { type: "array", items: { type: "string" } },
      any: { type: "array" },
      u: { type: "array", items: { type: ["string", "number"] } },
    });
    expect(renderShape(schema)).toBe("{ tags?: string[]; any?: unknown[]; u?: (string | number)[]; }");
  });

  it("joins type arrays and anyOf variants", () => {
    const schema = object({
      v: { type: ["string", "null"] },
      w: { anyOf: [object({ a: { type: "string" } }, ["a"]), { type: "boolean" }] },
    });
    expect(renderShape(schema)).toBe("{ v?: string | null; w?: { a: string; } | boolean; }");
  });

  it("quotes keys that are not identifiers and renders an object without properties as {}", () => {
    const schema = object({
      opts: object({ "dash-key": { type: "number" }, inner: { type: "object" } }, ["dash-key"]),
    });
    expect(renderShape(schema)).toBe('{ opts?: { "dash-key": number; inner?: {}; }; }');
  });

  it("prints a referenced definition as a type alias before the root", () => {
    const schema = {
      ...object({ p: { $ref: "#/$defs/Point" } }),
      $defs: { Point: object({ x: { type: "number" }, y: { type: "number" } }, ["x", "y"]) },
    };
    expect(renderShape(schema)).toBe("type Point = { x: number; y: number; };\n\n{ p?: Point; }");
  });

  it("gives up on additionalProperties: true", () => {
    expect(renderShape({ ...object({ a: { type: "string" } }), additionalProperties: true })).toBeNull();
  });
});

describe("renderShape: more of the subset", () => {
  it("accepts a closed object (additionalProperties: false)", () => {
    expect(renderShape({ ...object({ a: { type: "string" } }, ["a"]), additionalProperties: false })).toBe(
      "{ a: string; }",
    );
  });

  it("renders an object with no properties, and a bare schema, as {} and unknown", () => {
    expect(renderShape({ type: "object", properties: {} })).toBe("{}");
    expect(renderShape(object({ x: {} }))).toBe("{ x?: unknown; }");
  });

  it("uses oneOf when there is no anyOf", () => {
    expect(renderShape(object({ x: { oneOf: [{ type: "string" }, { const: "all" }] } }))).toBe(
      '{ x?: string | "all"; }',
    );
  });

  it("names definitions that are not identifiers DefinitionN, decodes ~1 and ~0, and orders by first use", () => {
    const schema = {
      ...object({ b: { $ref: "#/definitions/a~1b" }, c: { $ref: "#/$defs/Tilde~0" }, d: { $ref: "#/$defs/Later" } }),
      definitions: { "a/b": { type: "string" } },
      $defs: { Later: { type: "boolean" }, "Tilde~": { type: "number" } },
    };
    expect(renderShape(schema)).toBe(
      "type Definition1 = string;\ntype Definition2 = number;\ntype Later = boolean;\n\n{ b?: Definition1; c?: Definition2; d?: Later; }",
    );
  });

  it("lists a definition first used inside another definition after it", () => {
    const schema = {
      ...object({ outer: { $ref: "#/$defs/Outer" } }),
      $defs: { Outer: object({ inner: { $ref: "#/$defs/Inner" } }), Inner: { type: "string" } },
    };
    expect(renderShape(schema)).toBe("type Outer = { inner?: Inner; };\ntype Inner = string;\n\n{ outer?: Outer; }");
  });

  it("writes number literals as numbers and strings as JSON", () => {
    expect(renderShape({ enum: ['a"b', 1.5, -2] })).toBe('"a\\"b" | 1.5 | -2');
  });
});

describe("renderShape: null sends the caller to Parameters", () => {
  it.each([
    ["a string", "object"],
    ["an array", [{ type: "string" }]],
    ["null", null],
    ["allOf", object({ a: { allOf: [{ type: "string" }] } })],
    // biome-ignore lint/suspicious/noThenProperty: `then` is the JSON Schema keyword under test.
    ["if/then", object({ a: { type: "string", if: {}, then: {} } })],
    ["not", { not: { type: "string" } }],
    ["patternProperties", { type: "object", patternProperties: { "^x": { type: "string" } } }],
    ["nested additionalProperties", object({ a: { type: "object", additionalProperties: { type: "string" } } })],
    ["a remote $ref", object({ a: { $ref: "https://example.com/schema.json" } })],
    ["a $ref to a missing definition", object({ a: { $ref: "#/$defs/Missing" } })],
    ["an empty anyOf", object({ a: { anyOf: [] } })],
    ["an unknown type", object({ a: { type: "date" } })],
    ["a type array with an unknown type", object({ a: { type: ["string", "date"] } })],
    ["an object literal in an enum", object({ a: { enum: [{ x: 1 }] } })],
    ["properties that are not an object", { type: "object", properties: ["a"] }],
    ["malformed $defs", { ...object({}), $defs: { X: "string" } }],
    ["an unrenderable definition", { ...object({ a: { $ref: "#/$defs/X" } }), $defs: { X: { allOf: [] } } }],
  ])("%s", (_label, schema) => {
    expect(renderShape(schema)).toBeNull();
  });
});
