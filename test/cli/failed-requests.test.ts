/**
 * Failed requests (issue 34, point 4) through the real proxy: an upstream that answers one request
 * HTTP 429 and the others with its own usage, and an upstream nobody listens on. Each failed request
 * says so with its reason on the live line, in report and in show, and is left out of the cache rates
 * and the bill; the provider's prompt count is shown beside ours and flagged when over 20% apart.
 */
import { afterEach, describe, expect, it } from "vitest";
import { serveHttp } from "../../src/capture/http.js";
import { openaiCompletions } from "../../src/providers/openai-completions.js";
import { chatBody, postChat, startCli } from "../capture/http-harness.js";
import { cliInProcess } from "../fixtures/cli-in-process.js";
import { closedPort } from "../fixtures/closed-port.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
  removeTempDirs();
});

/** `report` or `show` in this process (test/fixtures/cli-in-process.ts); the proxy is the built CLI's child. */
const cli = (...args: string[]) => cliInProcess({ COLUMNS: "400" }, ...args);

/** Answers a body holding FAIL with a rate-limit error; any other with a reply reporting 20 prompt tokens. */
async function rateLimitingUpstream(): Promise<string> {
  const upstream = await serveHttp(
    async (request, response) => {
      let body = "";
      for await (const chunk of request) body += chunk;
      if (body.includes("FAIL")) {
        response.writeHead(429, { "content-type": "application/json" });
        response.end(JSON.stringify({ error: { message: "Rate limit reached", type: "rate_limit" } }));
        return;
      }
      const reply = openaiCompletions.renderReply(
        { kind: "text", text: "ok", usage: { inputTokens: 20, outputTokens: 1 } },
        body,
      );
      response.writeHead(200, { "content-type": "application/json" });
      response.end(reply.chunks.join(""));
    },
    (error) => ({ status: 500, message: error.message }),
    0,
    "127.0.0.1",
  );
  closers.push(() => upstream.close());
  return `http://127.0.0.1:${upstream.port}`;
}

/** The proxy CLI in front of `upstream`; each body posted in turn, then the proxy stopped. */
async function throughProxy(upstream: string, name: string, bodies: string[]) {
  const runs = tempDir("failed-requests-");
  const proxy = await startCli(["proxy", "--upstream", upstream, "--runs", runs, "--name", name, "--no-db"]);
  for (const body of bodies) await (await postChat(`${proxy.url}/v1/chat/completions`, body)).text();
  // The live lines are on stderr; a stop writes what is queued, each line with it, before the summary.
  expect(await proxy.stop()).toBe(0);
  return { runs, stderr: proxy.stderr() };
}

const long = "A question long enough that our count is far above twenty tokens. ".repeat(8);

describe("failed requests, shown with their reason and left out of rates and the bill", () => {
  it("an error status: the live line, report, show and the cost name it; the provider's count beside ours", async () => {
    const upstream = await rateLimitingUpstream();
    const bodies = [chatBody(long, { stream: false }), chatBody(`${long} FAIL`, { stream: false })];
    const { runs, stderr } = await throughProxy(upstream, "mixed", bodies);
    expect(stderr).toMatch(/^#2 openai-completions .* status 429 \(HTTP 429: Rate limit reached\) /m);
    expect(stderr).toMatch(/^#1 openai-completions .* status 200 c1 main new conversation$/m);

    const report = await cli("report", "mixed", "--runs", runs);
    expect(report.code).toBe(0);
    expect(report.out).toContain("FAILED: HTTP 429: Rate limit reached");
    expect(report.out).toContain("1 request(s) FAILED (no response, or an error status)");
    // Ours is far above the 20 the provider reported: flagged, with the tokenizer named in the legend.
    expect(report.out).toMatch(/tok; provider 20 \(ours \+\d+(\.\d)?%, over 20% apart\)/);
    expect(report.out).toContain("provider: the prompt tokens it reported, flagged over 20% from ours");
    expect(report.out).toMatch(/^tokens o200k_base/m);
    // Only the request that reached the provider counts, by its usage alone.
    expect(report.out).toMatch(/cache: hit rate 0% \(0 of 20 prompt tokens read\), .*; by the provider's usage$/m);

    const plain = (await cli("report", "mixed", "--runs", runs, "--plain")).out.split("\n");
    expect(plain[0]).toMatch(/ tokens=\d+ providerTokens=20 /);
    expect(plain[1]).toContain('failed="HTTP 429: Rate limit reached"');

    const show = (await cli("show", "mixed", "2", "--runs", runs)).out;
    expect(show).toContain("FAILED: HTTP 429: Rate limit reached (no cache read or written, billed nothing)");
    expect((await cli("show", "mixed", "1", "--runs", runs)).out).toMatch(
      /^\d+ tokens \(ours, o200k_base\) · provider 20 \(ours \+[\d.]+%, over 20% apart\)/m,
    );

    const cost = JSON.parse(
      (await cli("report", "mixed", "--runs", runs, "--cost", "--json", "--model", "gpt-4.1")).out,
    ) as {
      requests: { failure: string | null; predictedCost: number; predicted: { inputTokens: number } }[];
    };
    expect(cost.requests.map((r) => r.failure)).toEqual([null, "HTTP 429: Rate limit reached"]);
    expect(cost.requests[1]).toMatchObject({ predictedCost: 0, predicted: { inputTokens: 0 } });
    expect(cost.requests[0]!.predictedCost).toBeGreaterThan(0);
  });

  it("no upstream at all: the reason on the live line, and no hit rate from requests that reached nothing", async () => {
    const down = `http://127.0.0.1:${await closedPort()}`;
    const { runs, stderr } = await throughProxy(down, "down", [chatBody("one"), chatBody("two")]);
    expect(stderr).toMatch(
      /^#1 openai-completions .* status none failed \(upstream http:\/\/127\.0\.0\.1:\d+ failed: .*ECONNREFUSED.*\) /m,
    );
    const report = await cli("report", "down", "--runs", runs);
    expect(report.out).toContain("2 request(s) FAILED");
    expect(report.out).toMatch(/cache: hit rate n\/a \(0 of 0 prompt tokens read\)/);
    const cost = (await cli("report", "down", "--runs", runs, "--cost", "--model", "gpt-4.1")).out;
    expect(cost).toContain("2 failed request(s) reached no model: billed nothing, left out of the cache rates");
  });
});
