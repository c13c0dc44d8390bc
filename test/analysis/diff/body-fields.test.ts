import { describe, expect, it } from "vitest";
import { bodyFieldChanges, fieldFilter, fieldValue } from "../../../src/analysis/diff/body-fields.js";
import { partedBody } from "../../fixtures/parted-body.js";

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

  it("reads bodies stored in parts as it reads them whole: the fields in their order, a long array's elements among them", () => {
    const long = (word: string) => Array.from({ length: 40 }, (_, i) => `${word}${i}`).join(" ");
    const messages = Array.from({ length: 120 }, (_, i) => ({
      role: i % 2 ? "assistant" : "user",
      content: long(`m${i}`),
    }));
    const fields = (n: number) => ({
      metadata: { user_id: `u${n}` },
      stop_sequences: [long(`stop${n}`), "x"],
      messages,
      temperature: n,
      tools: [{ name: "Read", description: long(`tool${n}`) }],
    });
    const [a, b] = [JSON.stringify(fields(1)), JSON.stringify({ top_k: 3, ...fields(2) })];
    const whole = bodyFieldChanges(a, b, fieldFilter(["metadata"]));
    expect(whole.changes.map((c) => c.path)).toEqual(["stop_sequences[0]", "temperature", "top_k"]);
    expect(bodyFieldChanges(partedBody(a), partedBody(b), fieldFilter(["metadata"]))).toEqual(whole);
    expect(bodyFieldChanges(partedBody(a), b, fieldFilter(["metadata"]))).toEqual(whole);
  });

  it("prints a value as its JSON, cut with … when long, and an absent field as absent", () => {
    expect(fieldValue("x")).toBe('"x"');
    expect(fieldValue(undefined)).toBe("absent");
    expect(fieldValue("y".repeat(100), 10)).toBe(`"${"y".repeat(8)}…`);
  });
});
