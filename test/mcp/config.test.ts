import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type LoadMcpConfigOptions, loadMcpConfig } from "../../src/mcp/config.js";
import { parseJsonc } from "../../src/mcp/jsonc.js";
import { userErrorOf } from "../fixtures/user-error.js";

let root: string;
let opts: LoadMcpConfigOptions;
let paths: { shared: string; agents: string; agentsNested: string; agent: string; project: string; projectPi: string };

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "mcp-config-"));
  const home = join(root, "home");
  const cwd = join(root, "project");
  const agentDir = join(home, ".pi", "agent");
  mkdirSync(cwd, { recursive: true });
  opts = { cwd, agentDir, home, env: {} };
  paths = {
    shared: join(home, ".config", "mcp", "mcp.json"),
    agents: join(home, ".agents", "mcp.json"),
    agentsNested: join(home, ".agents", "mcp", "mcp.json"),
    agent: join(agentDir, "mcp.json"),
    project: join(cwd, ".mcp.json"),
    projectPi: join(cwd, ".pi", "mcp.json"),
  };
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

function write(path: string, content: unknown): string {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content));
  return path;
}

function servers(mcpServers: Record<string, unknown>, settings?: Record<string, unknown>): unknown {
  return settings ? { mcpServers, settings } : { mcpServers };
}

describe("layers", () => {
  it("returns an empty config when no file exists", () => {
    expect(loadMcpConfig(opts)).toEqual({ servers: [], settings: {}, sources: [] });
  });

  it("merges all six layers in order, later files winning field by field", () => {
    write(
      paths.shared,
      servers({ s: { command: "shared", args: ["a"], lifecycle: "eager" } }, { toolPrefix: "short" }),
    );
    write(paths.agents, servers({ s: { args: ["b"] } }));
    write(paths.agentsNested, servers({ s: { cwd: "/nested" } }));
    write(paths.agent, servers({ s: { idleTimeout: 3 } }, { directTools: true }));
    write(paths.project, servers({ s: { lifecycle: "lazy" } }));
    write(paths.projectPi, servers({ s: { command: "project-pi" } }, { toolPrefix: "none" }));

    const config = loadMcpConfig(opts);
    expect(config.sources).toEqual([
      paths.shared,
      paths.agents,
      paths.agentsNested,
      paths.agent,
      paths.project,
      paths.projectPi,
    ]);
    expect(config.servers).toEqual([
      { name: "s", entry: { command: "project-pi", args: ["b"], lifecycle: "lazy", cwd: "/nested", idleTimeout: 3 } },
    ]);
    expect(config.settings).toEqual({ toolPrefix: "none", directTools: true });
  });

  it("replaces a record field as a whole rather than merging inside it", () => {
    write(paths.agent, servers({ s: { command: "x", env: { A: "1", B: "2" } } }));
    write(paths.project, servers({ s: { env: { B: "3" } } }));
    expect(loadMcpConfig(opts).servers[0]!.entry.env).toEqual({ B: "3" });
  });

  it("orders servers by first appearance across layers", () => {
    write(paths.shared, servers({ zeta: { command: "z" }, alpha: { command: "a" } }));
    write(paths.project, servers({ mid: { command: "m" }, zeta: { lifecycle: "eager" } }));
    expect(loadMcpConfig(opts).servers.map((s) => s.name)).toEqual(["zeta", "alpha", "mid"]);
  });

  it("reads configPath in place of the agent's mcp.json, resolving it against cwd", () => {
    write(paths.agent, servers({ fromAgent: { command: "a" } }));
    write(join(opts.cwd, "custom.json"), servers({ fromCustom: { command: "c" } }));
    write(paths.project, servers({ fromProject: { command: "p" } }));
    const config = loadMcpConfig({ ...opts, configPath: "custom.json" });
    expect(config.servers.map((s) => s.name)).toEqual(["fromCustom", "fromProject"]);
    expect(config.sources).toEqual([join(opts.cwd, "custom.json"), paths.project]);
  });

  it("reads only the agent's mcp.json in exclusive mode", () => {
    write(paths.shared, servers({ shared: { command: "s" } }));
    write(paths.agent, servers({ agent: { command: "a" } }));
    write(paths.projectPi, servers({ project: { command: "p" } }));
    const config = loadMcpConfig({ ...opts, exclusive: true });
    expect(config.servers.map((s) => s.name)).toEqual(["agent"]);
    expect(config.sources).toEqual([paths.agent]);
  });

  it("reads only configPath in exclusive mode when one is given", () => {
    write(paths.agent, servers({ agent: { command: "a" } }));
    const custom = write(join(root, "only.json"), servers({ only: { command: "o" } }));
    write(paths.project, servers({ project: { command: "p" } }));
    const config = loadMcpConfig({ ...opts, exclusive: true, configPath: custom });
    expect(config.servers.map((s) => s.name)).toEqual(["only"]);
  });

  it("keeps unknown fields and accepts imports without recording them", () => {
    write(paths.agent, {
      imports: ["cursor"],
      mcpServers: { s: { command: "x", futureField: { a: 1 } } },
      settings: { newSetting: 2 },
    });
    const config = loadMcpConfig(opts);
    expect(config.servers[0]!.entry).toEqual({ command: "x", futureField: { a: 1 } });
    expect(config.settings).toEqual({ newSetting: 2 });
    expect(config).not.toHaveProperty("imports");
  });

  it("interpolates ${VAR} in env, url and headers values only", () => {
    write(
      paths.agent,
      servers({
        s: {
          command: "${TOOL}",
          url: "http://127.0.0.1:${PORT}/mcp",
          env: { KEY: "k-${SECRET}" },
          headers: { Authorization: "Bearer ${SECRET}${UNSET}" },
        },
      }),
    );
    const entry = loadMcpConfig({ ...opts, env: { PORT: "8123", SECRET: "s3", TOOL: "node" } }).servers[0]!.entry;
    expect(entry).toEqual({
      command: "${TOOL}",
      url: "http://127.0.0.1:8123/mcp",
      env: { KEY: "k-s3" },
      headers: { Authorization: "Bearer s3" },
    });
  });
});

describe("JSONC", () => {
  it("accepts comments and trailing commas outside strings and leaves them alone inside strings", () => {
    write(
      paths.agent,
      `// leading comment
{
  /* block
     comment */
  "mcpServers": {
    "s": {
      "command": "node", // trailing comment
      "args": ["// not a comment", "/* nor this */", "a,]", "quote \\" // still a string",],
      "url": "http://x/*y*/z",
    },
  },
}
`,
    );
    expect(loadMcpConfig(opts).servers[0]!.entry).toEqual({
      command: "node",
      args: ["// not a comment", "/* nor this */", "a,]", 'quote " // still a string'],
      url: "http://x/*y*/z",
    });
  });

  it("parses what JSON.parse parses, escapes and numbers included", () => {
    const text = '{"a":[1,-2.5e3,0.5,true,false,null],"b":"\\u00e9\\n\\t\\\\\\/","__proto__":{"x":1}}';
    expect(parseJsonc(text)).toEqual(JSON.parse(text));
    expect(Object.keys(parseJsonc(text) as object)).toEqual(["a", "b", "__proto__"]);
  });

  it("rejects what is not JSON even with comments allowed", () => {
    for (const bad of ["{,}", "[1,,2]", "{'a':1}", "[01]", '{"a" 1}', "[1] x", "/* open", '"\n"', ""]) {
      expect(() => parseJsonc(bad), bad).toThrow(/at line \d+ column \d+/);
    }
  });
});

describe("validation errors", () => {
  it("names a missing explicit configPath", () => {
    const missing = join(root, "nope.json");
    const error = userErrorOf(() => loadMcpConfig({ ...opts, configPath: missing }));
    expect(error.message).toBe(`${missing}: MCP config file not found`);
    expect(error.file).toBe(missing);
  });

  it("names the file and the line and column of invalid JSON", () => {
    write(paths.project, '{\n  "mcpServers": {\n    "s": { "command": "x" \n  }\n}');
    const error = userErrorOf(() => loadMcpConfig(opts));
    expect(error.file).toBe(paths.project);
    expect(error.message).toBe(
      `${paths.project}: invalid JSON: expected ',' or '}' after the property value at line 5 column 2`,
    );
  });

  it("names the position of a bad token inside a value", () => {
    write(paths.agent, '{"mcpServers": {"s": {"command": tru}}}');
    expect(userErrorOf(() => loadMcpConfig(opts)).message).toBe(
      `${paths.agent}: invalid JSON: unexpected character "t" at line 1 column 34`,
    );
  });

  const cases: [string, Record<string, unknown>, string, string][] = [
    ["command not a string", { command: 5 }, "mcpServers.probe-stub.command", "expected a string, got 5"],
    [
      "args not a string array",
      { command: "x", args: ["a", 1] },
      "mcpServers.probe-stub.args",
      "expected an array of strings, got an array",
    ],
    [
      "args a string",
      { command: "x", args: "a b" },
      "mcpServers.probe-stub.args",
      'expected an array of strings, got "a b"',
    ],
    [
      "unknown lifecycle",
      { command: "x", lifecycle: "sometimes" },
      "mcpServers.probe-stub.lifecycle",
      'expected one of "lazy", "eager", "keep-alive", "lazy-keep-alive", got "sometimes"',
    ],
    [
      "bad directTools",
      { command: "x", directTools: "all" },
      "mcpServers.probe-stub.directTools",
      'expected true, false, "search" or an array of tool names, got "all"',
    ],
    [
      "bad toolPrefix",
      { command: "x", toolPrefix: "long" },
      "mcpServers.probe-stub.toolPrefix",
      'expected one of "server", "short", "none", "mcp", got "long"',
    ],
    [
      "env not strings",
      { command: "x", env: { A: 1 } },
      "mcpServers.probe-stub.env",
      "expected an object whose values are all strings, got an object",
    ],
    [
      "nested requestHeadersCommand field",
      { url: "http://x", requestHeadersCommand: { command: "h", timeoutMs: "5s" } },
      "mcpServers.probe-stub.requestHeadersCommand.timeoutMs",
      'expected a number of zero or more, got "5s"',
    ],
    [
      "no way to reach the server",
      { lifecycle: "eager" },
      "mcpServers.probe-stub",
      "expected a server with a command, a url or a socket",
    ],
    [
      "entry not an object",
      null as unknown as Record<string, unknown>,
      "mcpServers.probe-stub",
      "expected an object, got null",
    ],
  ];

  it.each(cases)("%s: names file, field and expectation", (_, entry, field, expected) => {
    write(paths.project, servers({ "probe-stub": entry }));
    const error = userErrorOf(() => loadMcpConfig(opts));
    expect(error.message).toBe(`${paths.project}: field "${field}": ${expected}`);
    expect(error.file).toBe(paths.project);
    expect(error.field).toBe(field);
  });

  it("names the file holding the bad value, not the last file read", () => {
    write(paths.shared, servers({ s: { command: "x", toolPrefix: "long" } }));
    write(paths.projectPi, servers({ s: { toolPrefix: "none" } }));
    expect(userErrorOf(() => loadMcpConfig(opts)).file).toBe(paths.shared);
  });

  it("accepts a server completed by an earlier layer's command", () => {
    write(paths.shared, servers({ s: { command: "x" } }));
    write(paths.project, servers({ s: { lifecycle: "keep-alive" } }));
    expect(loadMcpConfig(opts).servers[0]!.entry).toEqual({ command: "x", lifecycle: "keep-alive" });
  });

  it("names a key one or two edits from a known one (a typo would drop the setting), keeping others", () => {
    write(paths.project, servers({ "probe-stub": { comand: "node", args: [] } }));
    expect(userErrorOf(() => loadMcpConfig(opts)).message).toBe(
      `${paths.project}: field "mcpServers.probe-stub.comand": unknown key; did you mean "command"?`,
    );
    write(paths.project, servers({}, { directTool: true }));
    expect(userErrorOf(() => loadMcpConfig(opts)).field).toBe("settings.directTool");
    write(paths.project, servers({ s: { command: "x", futureOption: 1 } }));
    expect(loadMcpConfig(opts).servers[0]!.entry).toEqual({ command: "x", futureOption: 1 });
  });

  it("validates settings fields", () => {
    write(paths.agent, servers({}, { directTools: "some", toolPrefix: "mcp" }));
    expect(userErrorOf(() => loadMcpConfig(opts)).message).toBe(
      `${paths.agent}: field "settings.directTools": expected true, false, "search" or an array of tool names, got "some"`,
    );
  });

  it("rejects a top level or mcpServers that is not an object", () => {
    write(paths.agent, "[]");
    expect(userErrorOf(() => loadMcpConfig(opts)).message).toBe(
      `${paths.agent}: expected a JSON object at the top level, got an array`,
    );
    write(paths.agent, { mcpServers: [] });
    expect(userErrorOf(() => loadMcpConfig(opts)).field).toBe("mcpServers");
  });

  it("accepts every documented value of the enumerated fields", () => {
    write(
      paths.agent,
      servers({
        a: { command: "x", lifecycle: "lazy-keep-alive", directTools: "search", toolPrefix: "mcp" },
        b: { url: "http://x", lifecycle: "keep-alive", directTools: ["t1"], toolPrefix: "short" },
        c: { socket: "/tmp/s", lifecycle: "eager", directTools: false, toolPrefix: "server", approveTools: true },
      }),
    );
    expect(loadMcpConfig(opts).servers.map((s) => s.name)).toEqual(["a", "b", "c"]);
  });
});
