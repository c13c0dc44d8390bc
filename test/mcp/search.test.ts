import { describe, expect, it } from "vitest";
import { suggestionPrefixes } from "../../src/mcp/naming.js";
import {
  matchToolName,
  normalizeSearchText,
  paginate,
  rankTools,
  regexTools,
  type SearchableTool,
  scoreTool,
  sortByName,
  suggestToolNames,
  tokenize,
  toSearchableTools,
} from "../../src/mcp/search.js";
import { probeStubTools, stubEcho, stubTime } from "../fixtures/probe-stub-tools.js";

const tool = (name: string, extra: Partial<SearchableTool> = {}): SearchableTool => ({
  name,
  originalName: name,
  server: "srv",
  ...extra,
});

describe("toSearchableTools", () => {
  it("names cached tools and resources like direct tools, tools first", () => {
    const tools = [
      {
        name: "stub_echo",
        description: "Echo the given value back. Deterministic stub tool.",
        inputSchema: stubEcho.inputSchema,
      },
      { name: "stub_time", description: "Return a fixed stub timestamp.", inputSchema: stubTime.inputSchema },
    ];
    expect(toSearchableTools("probe-stub", "server", tools)).toEqual(probeStubTools);
    const resources = [
      { uri: "file:///README.md", name: "README.md" },
      { uri: "file:///b", name: "b", description: "The b file" },
    ];
    expect(toSearchableTools("docs", "short", [{ name: "x.y" }], resources)).toEqual([
      { name: "docs_x_y", originalName: "x.y", server: "docs" },
      {
        name: "docs_read_readme_md",
        originalName: "read_readme_md",
        server: "docs",
        description: "Read resource: file:///README.md",
        resourceUri: "file:///README.md",
      },
      {
        name: "docs_read_b",
        originalName: "read_b",
        server: "docs",
        description: "The b file",
        resourceUri: "file:///b",
      },
    ]);
  });

  it("keeps the first of two entries with the same prefixed name", () => {
    const result = toSearchableTools(
      "s",
      "server",
      [{ name: "read_b", description: "tool" }],
      [{ uri: "u", name: "B" }],
    );
    expect(result).toEqual([{ name: "s_read_b", originalName: "read_b", server: "s", description: "tool" }]);
  });
});

describe("search text", () => {
  it("splits camelCase, turns separators into spaces and lowercases", () => {
    expect(normalizeSearchText("getUser.by_id:v2-x/y")).toBe("get user by id v2 x y");
    expect(tokenize("readFile (fast!)")).toEqual(["read", "file", "fast"]);
  });
});

describe("scoreTool: hand-checked scores", () => {
  it("scores the probe stub tools for the p1 query", () => {
    // echo: name tokens 3×48 + original 2×40 + server 2×32 + description 2×20, full coverage 25, first token in name 8.
    expect(scoreTool("probe stub echo", stubEcho)).toBe(361);
    // time: 96 + 40 + 64 + 20, two of three tokens round(6.67) = 7, first token in name 8.
    expect(scoreTool("probe stub echo", stubTime)).toBe(235);
  });

  it("adds phrase matches and the exact-field bonus", () => {
    const readFile = tool("srv_read_file", { originalName: "read_file", description: "Read a file from disk" });
    // name contains the phrase 72 + tokens 96; original equals it 140 + 80; description tokens 40;
    // coverage 25, first token in name 8, exact field 20.
    expect(scoreTool("read file", readFile)).toBe(481);
  });

  it("scores stems: a field token starting with the query token, or a long field token starting it", () => {
    const t = tool("x", { description: "configuration" });
    // The description starts with the phrase 5×9, the token stems 5×2, coverage 25.
    expect(scoreTool("config", t)).toBe(80);
    const stem = tool("x", { description: "search" });
    // No phrase hit; "searching" starts with the 6-letter field token "search": 5×2, coverage 25.
    expect(scoreTool("searching", stem)).toBe(35);
    const short = tool("x", { description: "a b" });
    expect(scoreTool("about", short)).toBeNull();
  });

  it("needs every token of a one- or two-token query unless the phrase occurs", () => {
    expect(scoreTool("stub missing", stubEcho)).toBeNull();
    expect(scoreTool("", stubEcho)).toBeNull();
    expect(scoreTool("---", stubEcho)).toBeNull();
  });

  it("needs 60% of a longer query's tokens", () => {
    expect(scoreTool("echo value nope", stubEcho)).not.toBeNull();
    expect(scoreTool("echo nope nada", stubEcho)).toBeNull();
  });

  it("scores keyword phrases one by one and ignores them when asked", () => {
    const nav = tool("web_nav", {
      originalName: "nav",
      server: "web",
      description: "Go to a URL",
      keywords: ["browser automation"],
    });
    // keyword equals the query: 5×14 + tokens 40, coverage 25, exact field 20.
    expect(scoreTool("browser automation", nav)).toBe(155);
    expect(scoreTool("browser automation", nav, { useKeywords: false })).toBeNull();
    const split = { ...nav, keywords: ["browser", "automation"] };
    // Two separate keywords never phrase-match their concatenation: tokens 40 + coverage 25.
    expect(scoreTool("browser automation", split)).toBe(65);
  });
});

describe("rankTools", () => {
  it("returns matching tools only, best first", () => {
    expect(rankTools("probe stub echo", probeStubTools).map((t) => t.name)).toEqual([
      "probe-stub_stub_echo",
      "probe-stub_stub_time",
    ]);
    expect(rankTools("timestamp", probeStubTools)).toEqual([stubTime]);
    expect(rankTools("nothing here", probeStubTools)).toEqual([]);
  });

  it("breaks ties by name", () => {
    const tools = [tool("b_tool", { description: "same" }), tool("a_tool", { description: "same" })];
    expect(rankTools("same", tools).map((t) => t.name)).toEqual(["a_tool", "b_tool"]);
  });

  it("lets a better field win: a name hit outranks a description hit", () => {
    const tools = [tool("other", { description: "deploy the site" }), tool("deploy")];
    expect(rankTools("deploy", tools).map((t) => t.name)).toEqual(["deploy", "other"]);
  });

  it("uses keywords unless told not to", () => {
    const nav = tool("web_nav", { keywords: ["browser"] });
    expect(rankTools("browser", [nav])).toEqual([nav]);
    expect(rankTools("browser", [nav], { useKeywords: false })).toEqual([]);
  });

  it("sortByName orders a blank-query listing", () => {
    expect(sortByName([stubTime, stubEcho])).toEqual([stubEcho, stubTime]);
  });
});

describe("regexTools", () => {
  it("matches name, description or keyword case-insensitively, keeping the given order", () => {
    const kw = tool("zz", { keywords: ["Timestamp helper"] });
    const result = regexTools("STUB|helper", [stubTime, kw, stubEcho]);
    expect(result).toEqual({ matches: [stubTime, kw, stubEcho] });
    expect(regexTools("^probe-stub_stub_e", probeStubTools)).toEqual({ matches: [stubEcho] });
  });

  it("refuses patterns over 256 characters and ones that do not compile", () => {
    expect(regexTools("a".repeat(257), probeStubTools)).toEqual({
      error: "Regex query is too long; maximum length is 256 characters.",
    });
    expect(regexTools("a".repeat(256), probeStubTools)).toEqual({ matches: [] });
    expect(regexTools("(", probeStubTools)).toEqual({ error: "Invalid regex: (" });
  });
});

describe("matchToolName", () => {
  it("prefers exact names and otherwise treats - and _ alike", () => {
    expect(matchToolName(probeStubTools, "probe-stub_stub_echo")).toEqual([stubEcho]);
    expect(matchToolName(probeStubTools, "probe_stub_stub_echo")).toEqual([stubEcho]);
    expect(matchToolName(probeStubTools, "stub_echo")).toEqual([]);
    const twins = [tool("a-b", { server: "one" }), tool("a_b", { server: "two" })];
    expect(matchToolName(twins, "a_b")).toEqual([twins[1]]);
    expect(matchToolName(twins, "a__b")).toEqual([]);
    expect(matchToolName([twins[0]!, tool("a-b", { server: "three" })], "a_b")).toHaveLength(2);
  });
});

describe("suggestToolNames", () => {
  const prefixes = suggestionPrefixes(["probe-stub"]);

  it("suggests the prefixed name for a bare original name (p1)", () => {
    expect(suggestToolNames("stub_echo", probeStubTools, prefixes)).toEqual(["probe-stub_stub_echo"]);
  });

  it("strips the longest known prefix first", () => {
    expect(suggestToolNames("mcp__probe-stub_echo", probeStubTools, prefixes)).toEqual(["probe-stub_stub_echo"]);
    const tools = [
      tool("a_b_tool", { originalName: "tool", server: "a_b" }),
      tool("a_b", { originalName: "b", server: "a" }),
    ];
    // Stripping "a" would leave "b_tool"; the longer "a_b" leaves "tool", which only the first matches.
    expect(suggestToolNames("a_b_tool", tools, suggestionPrefixes(["a", "a_b"]))).toEqual(["a_b_tool"]);
  });

  it("ignores keywords and returns at most five", () => {
    expect(suggestToolNames("browser", [tool("nav", { keywords: ["browser"] })], [])).toEqual([]);
    const many = Array.from({ length: 7 }, (_, i) => tool(`echo_${i}`));
    expect(suggestToolNames("echo", many, [])).toEqual(["echo_0", "echo_1", "echo_2", "echo_3", "echo_4"]);
  });
});

describe("paginate", () => {
  const items = ["a", "b", "c"];

  it("pages and says where the next page starts", () => {
    expect(paginate(items, 0, 2)).toEqual({ items: ["a", "b"], total: 3, nextOffset: 2 });
    expect(paginate(items, 2, 2)).toEqual({ items: ["c"], total: 3, nextOffset: null });
    expect(paginate(items, 5, 2)).toEqual({ items: [], total: 3, nextOffset: null });
  });

  it("clamps offset and limit to whole numbers in range", () => {
    expect(paginate(items, -3, 1.9)).toEqual({ items: ["a"], total: 3, nextOffset: 1 });
    expect(paginate(items, 1.7, 0)).toEqual({ items: ["b"], total: 3, nextOffset: 2 });
    expect(paginate(items, Number.NaN, Number.POSITIVE_INFINITY)).toEqual({ items: ["a"], total: 3, nextOffset: 1 });
  });
});
