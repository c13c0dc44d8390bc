import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { UserError } from "../../src/errors.js";
import { loadFixture } from "../../src/stub-mcp/fixture.js";
import { cleanupStubs, ROOT, tempDir } from "./harness.js";

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
    expect(names).toEqual(
      expect.arrayContaining([
        "a.json",
        "b.json",
        "sampler.json",
        "rich.json",
        "faults.json",
        "growing.json",
        "late.json",
      ]),
    );
    for (const name of names) {
      const fixture = loadFixture(join(dir, name));
      // A server may start with no tools when it adds one later.
      expect(fixture.tools.length + (fixture.addsToolAfterInit ? 1 : 0)).toBeGreaterThan(0);
    }
  });

  it("keeps the declared fields and ignores `transport`", () => {
    const file = fixtureFile({
      name: "s",
      transport: "stdio",
      tools: [
        { name: "t", inputSchema: schema, result: "R", fault: "hang" },
        { name: "ask", inputSchema: schema, sampling: { prompt: "{q}" } },
      ],
      prompts: [
        { name: "p", arguments: [{ name: "x", required: true }], messages: [{ role: "assistant", text: "{x}" }] },
      ],
    });
    expect(loadFixture(file)).toEqual({
      name: "s",
      tools: [
        { name: "t", inputSchema: schema, result: "R", fault: "hang" },
        { name: "ask", inputSchema: schema, sampling: { prompt: "{q}" } },
      ],
      prompts: [
        { name: "p", arguments: [{ name: "x", required: true }], messages: [{ role: "assistant", text: "{x}" }] },
      ],
    });
  });

  it("names the file and field of each problem", () => {
    expectUserError("{not json", undefined, "expected a readable JSON file");
    expectUserError({ tools: [] }, "name", "expected a string");
    expectUserError({ name: "s", tools: [{ name: "t", inputSchema: schema }] }, "tools[0].result", "expected a string");
    expectUserError(
      { name: "s", tools: [{ name: "t", inputSchema: schema, result: "R", fault: "explode" }] },
      "tools[0].fault",
      "crash, hang, block, garbage, error",
    );
    expectUserError(
      { name: "s", tools: [], resources: [{ uri: "u", name: "n" }] },
      "resources[0].text",
      "expected a string",
    );
    expectUserError(
      { name: "s", tools: [], prompts: [{ name: "p", messages: [{ role: "system", text: "x" }] }] },
      "prompts[0].messages[0].role",
      '"user" or "assistant"',
    );
    expectUserError(
      { name: "s", tools: [{ name: "t", inputSchema: schema, result: "R", addsTool: { name: "u" } }] },
      "tools[0].addsTool.inputSchema",
      "expected a JSON object",
    );
    expectUserError(
      { name: "s", tools: [], addsToolAfterInit: { delayMs: -1, tool: {} } },
      "addsToolAfterInit.delayMs",
      "expected an integer ≥ 0",
    );
    expectUserError({ name: "s", tools: [], toolsListExtra: [1] }, "toolsListExtra", "expected a JSON object");
    expectUserError(
      { name: "s", tools: [{ name: "t", inputSchema: schema, sampling: { prompt: "p", request: "x" } }] },
      "tools[0].sampling.request",
      "expected a JSON object",
    );
  });

  it("keeps a growing tool list, list hints and sampling request params as written", () => {
    const added = { name: "u", inputSchema: schema, result: "U" };
    const content = {
      name: "s",
      tools: [
        { name: "t", inputSchema: schema, result: "R", addsTool: added },
        { name: "ask", inputSchema: schema, sampling: { prompt: "p", request: { stopSequences: ["x"] } } },
      ],
      toolsListExtra: { ttlMs: 5 },
      addsToolAfterInit: { delayMs: 10, tool: added },
    };
    expect(loadFixture(fixtureFile(content))).toEqual(content);
  });
});
