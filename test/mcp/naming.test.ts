import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  directToolName,
  namespaceToolName,
  RESERVED_TOOL_NAMES,
  resourceToolName,
  serverPrefix,
  shortPrefix,
  suggestionPrefixes,
} from "../../src/mcp/naming.js";

describe("namespaceToolName", () => {
  it("turns dashes into underscores when the result is a plain identifier", () => {
    expect(namespaceToolName("probe-stub")).toBe("mcp__probe_stub");
    expect(namespaceToolName("my-server-1")).toBe("mcp__my_server_1");
  });

  it("encodes other names behind _mcpns_: _ doubles, other characters become _<hex>_", () => {
    expect(namespaceToolName("a.b")).toBe("mcp___mcpns_a_2e_b");
    expect(namespaceToolName("a_b.c")).toBe("mcp___mcpns_a__b_2e_c");
    expect(namespaceToolName("awslabs.aws-documentation-mcp-server")).toBe(
      "mcp___mcpns_awslabs_2e_aws__documentation__mcp__server",
    );
    expect(namespaceToolName("数")).toBe("mcp___mcpns__6570_");
    expect(namespaceToolName("团队")).toBe("mcp___mcpns__56e2__961f_");
  });

  it("encodes a name that already starts with the marker, so it cannot pose as an encoded one", () => {
    expect(namespaceToolName("_mcpns_6570")).toBe("mcp___mcpns___mcpns__6570");
    expect(namespaceToolName("_6570_")).toBe("mcp___6570_");
  });

  it("hashes a namespace longer than 59 characters into exactly 59", () => {
    const name = namespaceToolName("x".repeat(70));
    expect(name).toBe(`mcp___mcpns__h_${"x".repeat(32)}_c71bd109227e2343`);
    expect(name.length).toBe(64);
  });

  it("hashes the encoded form of a long unsafe name and keeps near-identical names apart", () => {
    const server = `${"a.".repeat(30)}z`;
    const encoded = `_mcpns_${"a_2e_".repeat(30)}z`;
    const digest = createHash("sha256").update(encoded).digest("hex").slice(0, 16);
    expect(namespaceToolName(server)).toBe(`mcp___mcpns__h_${encoded.slice(7, 39)}_${digest}`);
    expect(namespaceToolName(`${"x".repeat(60)}\uD800`)).not.toBe(namespaceToolName(`${"x".repeat(60)}\uFFFD`));
  });

  it("leaves a 59-character namespace unhashed", () => {
    expect(namespaceToolName("y".repeat(59))).toBe(`mcp__${"y".repeat(59)}`);
  });
});

describe("direct tool names", () => {
  it("prefixes by mode: server (default), short, none, mcp", () => {
    expect(directToolName("probe-stub", "stub_echo", "server")).toBe("probe-stub_stub_echo");
    expect(directToolName("probe-stub", "stub_echo", "short")).toBe("probe-stub_stub_echo");
    expect(directToolName("probe-stub", "stub_echo", "none")).toBe("stub_echo");
    expect(directToolName("probe-stub", "stub_echo", "mcp")).toBe("mcp__probe-stub_stub_echo");
  });

  it("short drops a trailing mcp or -mcp, falling back to mcp", () => {
    expect(shortPrefix("github-mcp")).toBe("github");
    expect(shortPrefix("filesMCP")).toBe("files");
    expect(shortPrefix("mcp")).toBe("mcp");
    expect(shortPrefix("-mcp")).toBe("mcp");
    expect(shortPrefix("mcp-server")).toBe("mcp-server");
    expect(directToolName("chrome-devtools-mcp", "take_screenshot", "short")).toBe("chrome-devtools_take_screenshot");
  });

  it("hex-escapes server characters outside [A-Za-z0-9_-] and turns dots in the tool name into _", () => {
    expect(directToolName("team.github", "search", "server")).toBe("team_2e_github_search");
    expect(directToolName("团队", "search", "server")).toBe("_56e2__961f__search");
    expect(directToolName("srv", "a.b.c", "server")).toBe("srv_a_b_c");
    expect(serverPrefix("team.github", "mcp")).toBe("mcp__team_2e_github");
    expect(serverPrefix("any", "none")).toBe("");
  });

  it("reserves Pi's built-in tool names and mcp", () => {
    expect([...RESERVED_TOOL_NAMES]).toEqual(["read", "bash", "edit", "write", "grep", "find", "ls", "mcp"]);
  });
});

describe("resourceToolName", () => {
  it("lowercases the name and collapses other characters into single underscores", () => {
    expect(resourceToolName("My Resource!")).toBe("read_my_resource");
    expect(resourceToolName("__Config -- File__")).toBe("read_config_file");
  });

  it("puts resource_ before a leading digit and names an empty slug resource", () => {
    expect(resourceToolName("2024 report")).toBe("read_resource_2024_report");
    expect(resourceToolName("!!!")).toBe("read_resource");
  });
});

describe("suggestionPrefixes", () => {
  it("lists the server, short and mcp prefix of every server", () => {
    expect(suggestionPrefixes(["probe-stub", "files-mcp"])).toEqual([
      "probe-stub",
      "probe-stub",
      "mcp__probe-stub",
      "files-mcp",
      "files",
      "mcp__files-mcp",
    ]);
  });
});
