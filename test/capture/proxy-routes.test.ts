import type { IncomingHttpHeaders } from "node:http";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startCaptureProxy } from "../../src/capture/capture-proxy.js";
import { serveHttp } from "../../src/capture/http.js";
import { resolveRoutes, routeFor, targetPathOf, unroutedMessage } from "../../src/capture/proxy-routes.js";
import { proxyTargets } from "../../src/capture/proxy-targets.js";
import { credentialQueryName } from "../../src/capture/redact.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";
import { chatBody, filesContaining, jsonl, postChat } from "./http-harness.js";

const isCredential = credentialQueryName();
const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
  removeTempDirs();
});

describe("route matching", () => {
  const routes = resolveRoutes(
    [
      { prefix: "/anthropic", upstream: "https://api.anthropic.com" },
      { prefix: "/openai", upstream: "https://user:pw@gw.example/openai/v1?key=abc" },
      { prefix: "/openai2", upstream: "http://127.0.0.1:9" },
    ],
    isCredential,
  );
  const target = (url: string) => {
    const resolved = proxyTargets(routes, isCredential)(url);
    return "target" in resolved ? resolved.target.origin + resolved.targetPath : undefined;
  };

  it("takes the prefix off and puts the rest under the route's upstream, keeping the query", () => {
    expect(target("/anthropic/v1/messages?beta=true")).toBe("https://api.anthropic.com/v1/messages?beta=true");
    expect(target("/openai/chat/completions")).toBe("https://gw.example/openai/v1/chat/completions");
    // A rest already under the upstream's path keeps it instead of repeating it (proxy's own rule).
    expect(target("/openai/openai/v1/responses")).toBe("https://gw.example/openai/v1/responses");
    expect(target("/openai2/v1/responses")).toBe("http://127.0.0.1:9/v1/responses");
  });

  it("matches whole path segments only, the longest prefix winning", () => {
    expect(routeFor(routes, "/openai2/x")?.prefix).toBe("/openai2");
    expect(routeFor(routes, "/openai")?.prefix).toBe("/openai");
    expect(routeFor(routes, "/openaix/v1/responses")).toBeUndefined();
    expect(routeFor(routes, "/v1/messages")).toBeUndefined();
    expect(routeFor(routes, "/")).toBeUndefined();
  });

  it("keeps userinfo as Basic credentials and shows the upstream redacted", () => {
    const openai = routes[1]!;
    expect(openai.authorization).toBe(`Basic ${Buffer.from("user:pw").toString("base64")}`);
    expect(openai.origin).toBe("https://gw.example");
    expect(openai.shown).not.toContain("pw");
    expect(openai.shown).not.toContain("abc");
  });

  it("the empty prefix serves every path, as proxy --upstream does", () => {
    const all = resolveRoutes([{ prefix: "", upstream: "http://h/v1" }], isCredential);
    const via = (path: string) => targetPathOf(routeFor(all, path)!, path);
    expect(via("/v1/chat/completions")).toBe("/v1/chat/completions");
    expect(via("/chat/completions")).toBe("/v1/chat/completions");
  });

  it("a path that starts with another API version keeps its own: a Gemini client behind --upstream http://h/v1 (issue 35)", () => {
    const all = resolveRoutes([{ prefix: "", upstream: "http://h/v1" }], isCredential);
    const via = (path: string) => targetPathOf(routeFor(all, path)!, path);
    expect(via("/v1beta/models/gemini-2.5-pro:streamGenerateContent")).toBe(
      "/v1beta/models/gemini-2.5-pro:streamGenerateContent",
    );
    expect(via("/v1alpha/models")).toBe("/v1alpha/models");
    // Not a version: under the upstream's path as before.
    expect(via("/v1beta")).toBe("/v1/v1beta");
    expect(via("/models/x:generateContent")).toBe("/v1/models/x:generateContent");
    const deeper = resolveRoutes([{ prefix: "/gemini", upstream: "http://h/api/v1" }], isCredential);
    expect(targetPathOf(deeper[0]!, "/gemini/v1beta/models/m:generateContent")).toBe(
      "/api/v1beta/models/m:generateContent",
    );
  });

  it("the path goes upstream as the client wrote it: dot segments and percent-encoding unresolved (issue 35)", () => {
    const all = resolveRoutes([{ prefix: "", upstream: "http://h" }], isCredential);
    const targets = proxyTargets(all, isCredential);
    expect(targets("/../x/%2e%2e/y?key=s3cret")).toMatchObject({
      targetPath: "/../x/%2e%2e/y?key=s3cret",
      shown: "http://h/../x/%2e%2e/y?key=%5Bredacted%5D",
    });
    // An absolute-form target names the proxy's upstream all the same.
    expect(targets("http://elsewhere.example/v1/chat/completions")).toMatchObject({
      targetPath: "/v1/chat/completions",
      shown: "http://h/v1/chat/completions",
      api: "openai-completions",
    });
  });

  it("refuses prefixes that are not one segment, or repeated, and names the prefixes in its 404", () => {
    expect(() => resolveRoutes([{ prefix: "/a/b", upstream: "http://h" }], isCredential)).toThrow();
    expect(() => resolveRoutes([{ prefix: "a", upstream: "http://h" }], isCredential)).toThrow();
    const twice = { prefix: "/a", upstream: "http://h" };
    expect(() => resolveRoutes([twice, twice], isCredential)).toThrow();
    expect(unroutedMessage(routes, "POST", "/v1/messages")).toBe(
      "proxy: no route for POST /v1/messages; paths start with one of /anthropic, /openai, /openai2",
    );
  });

  it("a request URL resolves as the routes say, the same the second time and after the memo starts afresh", () => {
    const targets = proxyTargets(routes, isCredential);
    const url = "/openai/chat/completions?key=s3cret&x=1";
    const first = targets(url);
    expect(first).toMatchObject({
      targetPath: "/openai/v1/chat/completions?key=s3cret&x=1",
      api: "openai-completions",
      route: routes[1],
    });
    expect("shown" in first && first.shown).not.toContain("s3cret");
    expect(targets(url)).toBe(first);
    // More distinct URLs than the memo holds: each still resolves to its own target.
    for (let i = 0; i < 300; i++)
      expect(targets(`/anthropic/v1/messages?n=${i}`)).toMatchObject({ targetPath: `/v1/messages?n=${i}` });
    expect(targets(url)).toEqual(first);
    expect(targets("/v1/messages")).toEqual({ unrouted: "/v1/messages" });
  });
});

/** An upstream that notes the path, body and authorization of each request and answers a short chat stream. */
async function notingUpstream() {
  const seen: { url: string; body: string; headers: IncomingHttpHeaders }[] = [];
  const service = await serveHttp(
    async (request, response) => {
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      seen.push({ url: request.url ?? "", body: Buffer.concat(chunks).toString("utf8"), headers: request.headers });
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.end(
        `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: "hi" }, finish_reason: "stop" }] })}\n\ndata: [DONE]\n\n`,
      );
    },
    (error) => ({ status: 500, message: error.message }),
    0,
    "127.0.0.1",
  );
  closers.push(() => service.close());
  return { url: `http://127.0.0.1:${service.port}`, seen };
}

describe("a proxy with routes", () => {
  it("sends each prefix to its own upstream with its own credentials, in one run; a path under none is a 404", async () => {
    const [a, b] = [await notingUpstream(), await notingUpstream()];
    const runs = tempDir("proxy-routes-");
    const unrouted: string[] = [];
    const proxy = await startCaptureProxy({
      routes: [
        { prefix: "/a", upstream: `${a.url.replace("//", "//alice:route-a-secret@")}/base` },
        { prefix: "/b", upstream: b.url },
      ],
      runsDir: runs,
      name: "routes",
      onUnrouted: (method, path) => unrouted.push(`${method} ${path}`),
    });
    closers.push(() => proxy.close());
    expect(proxy.url).toBe(proxy.origin);
    expect(proxy.routes.map((r) => r.prefix)).toEqual(["/a", "/b"]);
    expect(proxy.upstream).not.toContain("route-a-secret");

    for (const path of ["/a/v1/chat/completions", "/b/v1/chat/completions"]) {
      const response = await postChat(`${proxy.origin}${path}`, chatBody(path));
      expect(response.status).toBe(200);
      await response.text();
    }
    const lost = await postChat(`${proxy.origin}/v1/chat/completions`, chatBody("nowhere"));
    expect(lost.status).toBe(404);
    expect(((await lost.json()) as { error: { message: string } }).error.message).toContain("/a, /b");
    expect(unrouted).toEqual(["POST /v1/chat/completions"]);
    await proxy.close();

    expect(a.seen.map((s) => s.url)).toEqual(["/base/v1/chat/completions"]);
    expect(a.seen[0]!.headers.authorization).toBe(`Basic ${Buffer.from("alice:route-a-secret").toString("base64")}`);
    expect(b.seen.map((s) => [s.url, s.headers.authorization])).toEqual([["/v1/chat/completions", undefined]]);
    const records = jsonl<{ seq: number; api: string }>(join(runs, "routes", "requests.jsonl"));
    expect(records.map((r) => [r.seq, r.api])).toEqual([
      [1, "openai-completions"],
      [2, "openai-completions"],
    ]);
    const payloads = jsonl<{ type: string; url: string; body: string }>(join(runs, "routes", "payloads.jsonl"));
    const requests = payloads.filter((p) => p.type === "request");
    expect(requests.map((p) => new URL(p.url).pathname)).toEqual(["/base/v1/chat/completions", "/v1/chat/completions"]);
    expect(requests.map((p) => p.body)).toEqual([a.seen[0]!.body, b.seen[0]!.body]);
    expect(filesContaining(runs, "route-a-secret")).toEqual([]);
  });
});
