import { describe, expect, it } from "vitest";
import { formatSchema } from "../../src/mcp/format-schema.js";

describe("formatSchema", () => {
  it("lists each property with type, required marker and description", () => {
    const schema = {
      type: "object",
      properties: { value: { type: "string", description: "Value to echo" }, count: { type: "integer" } },
      required: ["value"],
    };
    expect(formatSchema(schema)).toBe("  value (string) *required* - Value to echo\n  count (integer)");
  });

  it("indents by the given number of spaces", () => {
    const schema = { type: "object", properties: { value: { type: "string" } } };
    expect(formatSchema(schema, 4)).toBe("    value (string)");
  });

  it("shows constraints in a fixed order, then the default", () => {
    const schema = {
      type: "object",
      properties: {
        name: { type: "string", default: "x", pattern: "^[a-z]+$", maxLength: 10, minLength: 1, format: "hostname" },
        n: { type: "number", maximum: 5, minimum: 0 },
        list: { type: "array", maxItems: 3, minItems: 1 },
      },
    };
    expect(formatSchema(schema)).toBe(
      [
        '  name (string) [minLength: 1] [maxLength: 10] [format: "hostname"] [pattern: "^[a-z]+$"] [default: "x"]',
        "  n (number) [minimum: 0] [maximum: 5]",
        "  list (array) [minItems: 1] [maxItems: 3]",
      ].join("\n"),
    );
  });

  it("describes const, enum and type arrays", () => {
    const schema = {
      type: "object",
      properties: {
        mode: { const: "fast" },
        format: { type: "string", enum: ["png", "jpeg", null] },
        v: { type: ["string", "null"] },
      },
    };
    expect(formatSchema(schema)).toBe(
      '  mode (const "fast")\n  format (enum: "png", "jpeg", null)\n  v (string | null)',
    );
  });

  it("puts children two spaces deeper: nested properties, items and union variants", () => {
    const schema = {
      type: "object",
      properties: {
        opts: {
          type: "object",
          properties: { depth: { type: "integer", description: "How deep" } },
          required: ["depth"],
        },
        tags: { type: "array", items: { type: "string" } },
        target: {
          anyOf: [
            { type: "string", description: "A path" },
            { type: "object", properties: { id: { type: "number" } } },
            7,
          ],
        },
        bare: true,
      },
      required: ["bare"],
    };
    expect(formatSchema(schema)).toBe(
      [
        "  opts (object)",
        "    depth (integer) *required* - How deep",
        "  tags (array)",
        "    items (string)",
        "  target",
        "    anyOf:",
        "      - string - A path",
        "      - object",
        "        id (number)",
        "      - 7",
        "  bare *required*",
      ].join("\n"),
    );
  });

  it("says when there is nothing to list", () => {
    expect(formatSchema({ type: "object", properties: {} })).toBe("  (no parameters)");
    expect(formatSchema(undefined)).toBe("  (no schema)");
    expect(formatSchema({ type: "object" })).toBe("  (object)");
    expect(formatSchema({})).toBe("  (complex schema)");
  });

  it("lists a root union or a root without type: object through its children", () => {
    expect(formatSchema({ properties: { a: { type: "string" } } })).toBe("  a (string)");
    expect(formatSchema({ oneOf: [{ type: "string" }, { type: "number" }] })).toBe(
      "  oneOf:\n    - string\n    - number",
    );
  });
});
