import { describe, expect, it } from "vitest";
import { bodyFieldChanges, fieldFilter, fieldValue } from "../../../src/analysis/diff/body-fields.js";

const body = (fields: Record<string, unknown>) =>
  JSON.stringify({ model: "m", system: "S", messages: [{ role: "user", content: "hi" }], tools: [], ...fields });

describe("bodyFieldChanges: every field outside tools, system and messages", () => {
  it("names each differing field by its path with both values, absent ones included; the parts are left to the part diff", () => {
    const a = body({ metadata: { user_id: "u1" }, thinking: { type: "enabled", budget_tokens: 1024 }, temperature: 1 });
    const b = JSON.stringify({
      ...JSON.parse(body({ metadata: { user_id: "u2" }, thinking: { type: "enabled", budget_tokens: 2048 } })),
      system: "other",
      stop_sequences: ["x"],
    });
    expect(bodyFieldChanges(a, b, fieldFilter([])).changes).toEqual([
      { path: "metadata.user_id", a: "u1", b: "u2" },
      { path: "thinking.budget_tokens", a: 1024, b: 2048 },
      { path: "temperature", a: 1, b: undefined },
      { path: "stop_sequences", a: undefined, b: ["x"] },
    ]);
  });

  it("sets apart the paths a user names: exact, a parent covering its fields, * for any key or index", () => {
    const a = body({ metadata: { user_id: "u1", session: "s1" }, output_config: [{ id: "a" }], top_p: 0.5 });
    const b = body({ metadata: { user_id: "u2", session: "s2" }, output_config: [{ id: "b" }], top_p: 0.9 });
    const { changes, ignored } = bodyFieldChanges(a, b, fieldFilter(["metadata", "output_config[*].id"]));
    expect(changes).toEqual([{ path: "top_p", a: 0.5, b: 0.9 }]);
    expect(ignored).toEqual(["metadata.user_id", "metadata.session", "output_config[0].id"]);
    expect(fieldFilter(["metadata.*"])("metadata.user_id")).toBe(true);
    expect(fieldFilter(["metadata.user_id"])("metadata")).toBe(false);
  });

  it("prints a value as its JSON, cut with … when long, and an absent field as absent", () => {
    expect(fieldValue("x")).toBe('"x"');
    expect(fieldValue(undefined)).toBe("absent");
    expect(fieldValue("y".repeat(100), 10)).toBe(`"${"y".repeat(8)}…`);
  });
});
