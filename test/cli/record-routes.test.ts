import { describe, expect, it } from "vitest";
import { defaultRunName, help } from "../../src/cli/record.js";
import { proxyBases, RECORD_ROUTES, recordRoutes, routesHelp } from "../../src/cli/record-routes.js";
import { escapeRegExp } from "../../src/text/regexp.js";
import { userErrorOf } from "../fixtures/user-error.js";

describe("record's routes", () => {
  it("go to the real providers by default", () => {
    expect(recordRoutes({}, {})).toEqual([
      { prefix: "/anthropic", upstream: "https://api.anthropic.com" },
      { prefix: "/openai", upstream: "https://api.openai.com" },
      { prefix: "/gemini", upstream: "https://generativelanguage.googleapis.com" },
      { prefix: "/code-assist", upstream: "https://cloudcode-pa.googleapis.com" },
      { prefix: "/backend-api", upstream: "https://chatgpt.com/backend-api" },
      { prefix: "/vertex", upstream: "https://aiplatform.googleapis.com" },
    ]);
  });

  it("Vertex AI's route goes to the endpoint of CLOUD_ML_REGION, the global one for global", () => {
    const vertex = (env: NodeJS.ProcessEnv) => recordRoutes({}, env).at(-1)!.upstream;
    expect(vertex({ CLOUD_ML_REGION: "us-east5" })).toBe("https://us-east5-aiplatform.googleapis.com");
    expect(vertex({ CLOUD_ML_REGION: "global" })).toBe("https://aiplatform.googleapis.com");
    expect(vertex({ CLOUD_ML_REGION: "us-east5/../x" })).toBe("https://aiplatform.googleapis.com");
    expect(
      recordRoutes({ "upstream-vertex": "http://127.0.0.1:7000" }, { CLOUD_ML_REGION: "us-east5" }).at(-1),
    ).toEqual({
      prefix: "/vertex",
      upstream: "http://127.0.0.1:7000",
    });
  });

  it("--upstream sends every route to one URL; a route's own flag wins over it", () => {
    const routes = recordRoutes({ upstream: "http://127.0.0.1:8000", "upstream-openai": "http://127.0.0.1:9000/v1" });
    expect(routes.map((route) => route.upstream)).toEqual([
      "http://127.0.0.1:8000",
      "http://127.0.0.1:9000/v1",
      "http://127.0.0.1:8000",
      "http://127.0.0.1:8000",
      "http://127.0.0.1:8000",
      "http://127.0.0.1:8000",
    ]);
  });

  it("an upstream that is not an http(s) URL is bad input naming its flag", () => {
    expect(userErrorOf(() => recordRoutes({ "upstream-gemini": "ftp://x" })).message).toBe(
      'record: --upstream-gemini expected an http or https URL, got "ftp://x"',
    );
  });

  it("give each provider's SDKs their base URL form; ChatGPT's backend on the HTTPS listener when there is one", () => {
    expect(proxyBases("http://127.0.0.1:4000")).toEqual({
      anthropic: "http://127.0.0.1:4000/anthropic",
      openai: "http://127.0.0.1:4000/openai/v1",
      gemini: "http://127.0.0.1:4000/gemini",
      "code-assist": "http://127.0.0.1:4000/code-assist",
      chatgpt: "http://127.0.0.1:4000/backend-api",
      vertex: "http://127.0.0.1:4000/vertex/v1",
    });
    expect(proxyBases("http://127.0.0.1:4000", "https://127.0.0.1:4001")).toMatchObject({
      openai: "http://127.0.0.1:4000/openai/v1",
      chatgpt: "https://127.0.0.1:4001/backend-api",
    });
  });
});

describe("record's --help", () => {
  it("lists every route: its prefix, its upstream and the APIs it carries, in 80 columns", () => {
    expect(
      routesHelp()
        .split("\n")
        .filter((line) => line.length > 80),
    ).toEqual([]);
    expect(help).toContain(routesHelp());
    // A wrapped line continues the one above it: join them to find a route's whole text.
    const text = help.replace(/\n {6,}/g, " ");
    for (const { prefix, upstream, apis } of RECORD_ROUTES)
      expect(text).toMatch(
        new RegExp(`^  ${escapeRegExp(prefix)} +→ ${escapeRegExp(upstream)} +${escapeRegExp(apis)}$`, "m"),
      );
  });
});

describe("record's default run name", () => {
  it.each([
    ["claude", "claude"],
    ["/usr/local/bin/node", "node"],
    ["./my agent!", "my-agent-"],
    [".hidden", "hidden"],
    ["ünï", "n-"],
    ["üöä", "record"],
    ["x".repeat(80), "x".repeat(64)],
  ])("%s → %s", (program, name) => {
    expect(defaultRunName(program)).toBe(name);
  });
});
