import { afterAll, afterEach, describe, expect, it } from "vitest";
import { parseToolArgs } from "../src/tool-args.js";
import { cleanupAdapters, startAdapter, stubServer } from "./mcp/adapter-harness.js";
import { extensionTool, removeTempDirs, scriptedAgent } from "./runtime/harness.js";

describe("parseToolArgs (shared by the turn loop and the MCP proxy tool)", () => {
  it("takes an object as it is, or JSON text of one", () => {
    expect(parseToolArgs({ a: 1 })).toEqual({ ok: true, value: { a: 1 } });
    expect(parseToolArgs('{"a":[1,2]}')).toEqual({ ok: true, value: { a: [1, 2] } });
  });

  it("says whether text was not JSON or JSON of something other than an object", () => {
    expect(parseToolArgs("{oops")).toMatchObject({ ok: false, problem: "not-json" });
    expect(parseToolArgs("[1]")).toEqual({ ok: false, problem: "not-an-object", got: "array" });
    expect(parseToolArgs("null")).toEqual({ ok: false, problem: "not-an-object", got: "null" });
    expect(parseToolArgs(7)).toEqual({ ok: false, problem: "not-an-object", got: "number" });
  });
});

describe("the texts the model reads for bad arguments are each caller's own", () => {
  afterEach(removeTempDirs);
  afterAll(cleanupAdapters);

  it("the turn loop: no arguments is {}, JSON errors and non-objects answer as before", async () => {
    const seen: unknown[] = [];
    const probe = extensionTool("probe_args", {
      execute: async (args) => {
        seen.push(args);
        return { content: "ok" };
      },
    });
    const { agent, bodies } = await scriptedAgent(
      [
        {
          calls: [
            { call: "probe_args", args: "" },
            { call: "probe_args", args: "{oops" },
            { call: "probe_args", args: "[1]" },
          ],
        },
        { text: "done" },
      ],
      { extensions: [(api) => api.registerTool(probe)], filter: { allow: ["probe_args"] } },
    );
    await agent.prompt("go");
    const results = bodies[1]!.messages.filter((m) => m.role === "tool").map((m) => m.content);
    expect(seen).toEqual([{}]);
    expect(results[0]).toBe("ok");
    expect(results[1]).toMatch(/JSON/);
    expect(results[1]).not.toMatch(/^Invalid args/);
    expect(results[2]).toBe("tool arguments must be a JSON object");
  });

  it("the MCP proxy tool: 'Invalid args JSON: …' and 'Invalid args: expected a JSON object, got …'", async () => {
    const adapter = await startAdapter({ servers: { faults: stubServer("faults") } });
    expect(await adapter.call("mcp", { tool: "faults_ok", args: "{oops" })).toEqual({
      content: expect.stringMatching(/^Invalid args JSON: \S/),
      isError: true,
    });
    expect(await adapter.call("mcp", { tool: "faults_ok", args: "[1]" })).toEqual({
      content: "Invalid args: expected a JSON object, got array",
      isError: true,
    });
    expect((await adapter.call("mcp", { tool: "faults_ok", args: '{"x":1}' })).content).toBe("FAULTS_OK");
  });
});
