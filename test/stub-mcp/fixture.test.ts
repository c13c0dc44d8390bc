import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { UserError } from "../../src/errors.js";
import { loadFixture } from "../../src/stub-mcp/fixture.js";
import { ROOT, cleanupStubs, tempDir } from "./harness.js";

afterEach(cleanupStubs);

function fixtureFile(content: unknown): string {
  const file = join(tempDir(), "fixture.json");
  writeFileSync(file, typeof content === "string" ? content : JSON.stringify(content));
  return file;
}

const schema = { type: "object", properties: {} };

function expectUserError(content: unknown, field: string | undefined, message: string): void {
  const file = fixtureFile(content);
  let caught: unknown;
  try {
    loadFixture(file);
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(UserError);
  expect(caught).toMatchObject({ file, field });
  expect((caught as Error).message).toContain(message);
}

describe("loadFixture", () => {
  it("loads every fixture shipped under fixtures/stub-servers", () => {
    const dir = join(ROOT, "fixtures/stub-servers");
    const names = readdirSync(dir).filter((name) => name.endsWith(".json"));
    expect(names).toEqual(expect.arrayContaining(["a.json", "b.json", "sampler.json", "rich.json", "faults.json"]));
    for (const name of names) expect(loadFixture(join(dir, name)).tools.length).toBeGreaterThan(0);
  });

  it("keeps the declared fields and ignores `transport`", () => {
    const file = fixtureFile({
      name: "s",
      transport: "stdio",
      tools: [{ name: "t", inputSchema: schema, result: "R", fault: "hang" }, { name: "ask", inputSchema: schema, sampling: { prompt: "{q}" } }],
      prompts: [{ name: "p", arguments: [{ name: "x", required: true }], messages: [{ role: "assistant", text: "{x}" }] }],
    });
    expect(loadFixture(file)).toEqual({
      name: "s",
      tools: [{ name: "t", inputSchema: schema, result: "R", fault: "hang" }, { name: "ask", inputSchema: schema, sampling: { prompt: "{q}" } }],
      prompts: [{ name: "p", arguments: [{ name: "x", required: true }], messages: [{ role: "assistant", text: "{x}" }] }],
    });
  });

  it("names the file and field of each problem", () => {
    expectUserError("{not json", undefined, "expected a readable JSON file");
    expectUserError({ tools: [] }, "name", "expected a string");
    expectUserError({ name: "s", tools: [{ name: "t", inputSchema: schema }] }, "tools[0].result", "expected a string");
    expectUserError({ name: "s", tools: [{ name: "t", inputSchema: schema, result: "R", fault: "explode" }] }, "tools[0].fault", "crash, hang, garbage, error");
    expectUserError({ name: "s", tools: [], resources: [{ uri: "u", name: "n" }] }, "resources[0].text", "expected a string");
    expectUserError(
      { name: "s", tools: [], prompts: [{ name: "p", messages: [{ role: "system", text: "x" }] }] },
      "prompts[0].messages[0].role",
      '"user" or "assistant"',
    );
  });
});
