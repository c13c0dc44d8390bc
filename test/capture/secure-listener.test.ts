/**
 * The proxy's HTTPS listener (record's, for Codex signed in with ChatGPT): a certificate made for the
 * session, which a client trusting the session's authority accepts and any other refuses; the same
 * routes as the plain listener, Codex's routing discovery kept on the proxy, every request captured.
 */

import { Agent, fetch as undiciFetch } from "undici";
import { afterEach, describe, expect, it } from "vitest";
import { startCaptureProxy } from "../../src/capture/capture-proxy.js";
import { serveHttp } from "../../src/capture/http.js";
import { localCertificate } from "../../src/capture/local-tls.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";
import { jsonl } from "./http-harness.js";

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
  removeTempDirs();
});

describe("the proxy's HTTPS listener", () => {
  it("serves the routes with the session's certificate; the discovery's own origin becomes NO_CONSTRAINT", async () => {
    let origin = "";
    const upstream = await serveHttp(
      async (_request, response) => {
        response.writeHead(200, { "content-type": "application/json" });
        response.end(JSON.stringify({ accounts: [{ id: "a1", workspace_backend_origin: origin }] }));
      },
      () => ({ status: 500, message: "upstream" }),
      0,
      "127.0.0.1",
    );
    closers.push(() => upstream.close());
    origin = `http://127.0.0.1:${upstream.port}`;
    const certificate = await localCertificate();
    const runs = tempDir("secure-proxy-");
    const routes = [{ prefix: "/backend-api", upstream: `${origin}/backend-api` }];
    const proxy = await startCaptureProxy({
      routes,
      runsDir: runs,
      name: "secure",
      secure: certificate,
      database: false,
    });
    closers.push(() => proxy.close());
    expect(proxy.secureOrigin).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const url = `${proxy.secureOrigin}/backend-api/wham/accounts/check`;

    const trusting = new Agent({ connect: { ca: certificate.authority } });
    closers.push(() => trusting.close());
    const reply = await undiciFetch(url, { dispatcher: trusting });
    expect(await reply.json()).toEqual({ accounts: [{ id: "a1", workspace_backend_origin: "NO_CONSTRAINT" }] });
    // Any client that trusts only the common roots refuses the listener.
    await expect(undiciFetch(url)).rejects.toThrow();

    await proxy.close();
    const rows = jsonl<{ type: string; url: string; body: string }>(`${proxy.dir}/payloads.jsonl`);
    const response = rows.find((row) => row.type === "response")!;
    // The capture keeps the reply as the upstream sent it.
    expect(JSON.parse(response.body).accounts[0].workspace_backend_origin).toBe(origin);
    expect(rows.find((row) => row.type === "request")!.url).toBe(`${origin}/backend-api/wham/accounts/check`);
  });
});
