import { afterEach, describe, expect, it } from "vitest";
import { type ToolFilter, ToolRegistry } from "../../src/runtime/registry.js";
import { createBuiltinTools, DEFAULT_ACTIVE } from "../../src/runtime/tools/builtin.js";
import type { ExtensionAPI } from "../../src/runtime/types.js";
import { extensionTool, profile, removeTempDirs, scriptedAgent, toolNames } from "./harness.js";

afterEach(removeTempDirs);

const registry = (filter: ToolFilter = {}) => new ToolRegistry(createBuiltinTools(profile), DEFAULT_ACTIVE, filter);

describe("tool registry and active set (pi-runtime.md §1.1, §6)", () => {
  it("the registry always holds the 8 built-ins in pi's order; read, bash, edit, write are active by default", () => {
    const r = registry();
    expect(r.registeredNames()).toEqual(["read", "bash", "powershell", "edit", "write", "grep", "find", "ls"]);
    expect(r.activeNames()).toEqual(["read", "bash", "edit", "write"]);
  });

  it("without --tools, extension tools follow the default set in registration order", () => {
    const r = registry();
    r.register(extensionTool("zeta"));
    r.register(extensionTool("alpha"));
    expect(r.activeNames()).toEqual(["read", "bash", "edit", "write", "zeta", "alpha"]);
  });

  it("--tools read,mcp is the initial active list and an allowlist: unlisted built-ins and extension tools never register", () => {
    const r = registry({ allow: ["read", "mcp"] });
    expect(r.registeredNames()).toEqual(["read"]);
    r.register(extensionTool("other"));
    expect(r.registeredNames()).toEqual(["read"]);
    expect(r.get("other")).toBeUndefined();
    r.register(extensionTool("mcp"));
    expect(r.registeredNames()).toEqual(["read", "mcp"]);
    expect(r.activeNames()).toEqual(["read", "mcp"]);
  });

  it("request order follows the --tools order, also for an allowlisted extension tool registered after start-up", () => {
    const r = registry({ allow: ["mcp", "bash", "read"] });
    expect(r.activeNames()).toEqual(["bash", "read"]);
    r.register(extensionTool("mcp"));
    expect(r.activeNames()).toEqual(["mcp", "bash", "read"]);
  });

  it("unknown names in --tools are ignored", () => {
    const r = registry({ allow: ["read", "no-such-tool", "ls"] });
    expect(r.registeredNames()).toEqual(["read", "ls"]);
    expect(r.activeNames()).toEqual(["read", "ls"]);
  });

  it("--exclude-tools applies after the allowlist", () => {
    const r = registry({ allow: ["read", "bash", "grep"], deny: ["bash"] });
    expect(r.registeredNames()).toEqual(["read", "grep"]);
    expect(r.activeNames()).toEqual(["read", "grep"]);
    const alone = registry({ deny: ["bash", "ls"] });
    expect(alone.registeredNames()).toEqual(["read", "powershell", "edit", "write", "grep", "find"]);
    expect(alone.activeNames()).toEqual(["read", "edit", "write"]);
    alone.register(extensionTool("bash"));
    expect(alone.get("bash")).toBeUndefined();
  });

  it("--no-builtin-tools: built-ins are registered but start inactive; extension tools stay active", () => {
    const r = registry({ noBuiltinTools: true });
    expect(r.registeredNames()).toHaveLength(8);
    expect(r.activeNames()).toEqual([]);
    r.register(extensionTool("ext"));
    expect(r.activeNames()).toEqual(["ext"]);
  });

  it("setting the active set keeps registered names only, in the order given", () => {
    const r = registry();
    r.setActive(["grep", "no-such-tool", "read", "grep"]);
    expect(r.activeNames()).toEqual(["grep", "read"]);
    expect(r.activeTools().map((t) => t.name)).toEqual(["grep", "read"]);
  });

  it("a later registration activates only the new extension tool, not one deactivated before", () => {
    const r = registry();
    r.register(extensionTool("first"));
    r.setActive(["read"]);
    r.register(extensionTool("second"));
    expect(r.activeNames()).toEqual(["read", "second"]);
    expect(r.registeredNames()).toContain("first");
  });
});

describe("the agent's requests carry the active set (pi-runtime.md §1.1, §6)", () => {
  it("a default agent sends read, bash, edit, write", async () => {
    const { agent, bodies } = await scriptedAgent([{ text: "done" }]);
    await agent.prompt("hi");
    expect(toolNames(bodies[0]!)).toEqual(["read", "bash", "edit", "write"]);
  });

  it("--tools mcp,read with mcp registered by an extension at load: the request lists mcp, then read", async () => {
    const { agent, bodies } = await scriptedAgent([{ text: "done" }], {
      filter: { allow: ["mcp", "read"] },
      extensions: [
        (api) => api.registerTool(extensionTool("mcp")),
        (api) => api.registerTool(extensionTool("ignored")),
      ],
    });
    await agent.prompt("hi");
    expect(toolNames(bodies[0]!)).toEqual(["mcp", "read"]);
  });

  it("--no-tools: nothing is registered and the request has no tools key", async () => {
    const { agent, bodies } = await scriptedAgent([{ text: "done" }], {
      noTools: true,
      extensions: [(api) => api.registerTool(extensionTool("ext"))],
    });
    await agent.prompt("hi");
    expect(agent.registry.registeredNames()).toEqual([]);
    expect(bodies[0]).not.toHaveProperty("tools");
    expect(Object.keys(bodies[0]!)).toEqual([
      "model",
      "messages",
      "stream",
      "stream_options",
      "max_completion_tokens",
      "enable_thinking",
    ]);
  });

  it("--no-builtin-tools: only the extension tool is sent", async () => {
    const { agent, bodies } = await scriptedAgent([{ text: "done" }], {
      filter: { noBuiltinTools: true },
      extensions: [(api) => api.registerTool(extensionTool("ext"))],
    });
    await agent.prompt("hi");
    expect(toolNames(bodies[0]!)).toEqual(["ext"]);
  });

  it("a tool registered during a tool call is in the very next request, without a reload", async () => {
    let api!: ExtensionAPI;
    const late = extensionTool("late_tool");
    const { agent, bodies } = await scriptedAgent([{ call: "register_late" }, { text: "done" }], {
      extensions: [
        (a) => {
          api = a;
          a.registerTool(
            extensionTool("register_late", {
              execute: async () => {
                api.registerTool(late);
                return { content: "registered" };
              },
            }),
          );
        },
      ],
    });
    await agent.prompt("go");
    expect(toolNames(bodies[0]!)).toEqual(["read", "bash", "edit", "write", "register_late"]);
    expect(toolNames(bodies[1]!)).toEqual(["read", "bash", "edit", "write", "register_late", "late_tool"]);
  });

  it("setActiveTools keeps registered names only and sets the next request's tools", async () => {
    const { agent, bodies } = await scriptedAgent([{ call: "narrow" }, { text: "done" }], {
      extensions: [
        (api) =>
          api.registerTool(
            extensionTool("narrow", {
              execute: async () => {
                api.setActiveTools(["narrow", "nope", "grep"]);
                return { content: "narrowed" };
              },
            }),
          ),
      ],
    });
    await agent.prompt("go");
    expect(toolNames(bodies[1]!)).toEqual(["narrow", "grep"]);
    expect(agent.extensionApi().getActiveTools()).toEqual(["narrow", "grep"]);
  });
});
