#!/usr/bin/env node
/**
 * The floor under the capture proxy's added latency: a relay with nothing of ours in it.
 *
 *   node scripts/bench-floor-relay.mjs <upstream URL>
 *
 * node:http takes each request, reads its body, and the same undici (this checkout's node_modules)
 * sends it upstream on a pool of kept-alive connections with a dispatch handler that writes the
 * status, headers and each chunk to the client as they come: no routes, no capture, no records.
 * Paths go upstream as they came. Prints `LISTENING <url>` (this relay's origin with the upstream's
 * path, as the proxy prints it) and serves until it is sent SIGTERM. scripts/bench-proxy.mjs runs it
 * beside the proxies, so what it adds is what node:http and undici alone cost on this machine.
 */
import "./help.mjs";
import { createServer } from "node:http";
import { Agent } from "undici";

const upstream = new URL(process.argv[2]);
const basePath = upstream.pathname.replace(/\/$/, "");
const pool = new Agent();
// Connection headers are each side's own (RFC 9110 §7.6.1); the rest pass as they came.
const HOP_BY_HOP = new Set(["connection", "keep-alive", "transfer-encoding", "host", "expect", "upgrade", "te"]);

function passed(headers) {
  const kept = {};
  for (const name in headers) if (!HOP_BY_HOP.has(name)) kept[name] = headers[name];
  return kept;
}

const server = createServer((request, response) => {
  const chunks = [];
  request.on("data", (chunk) => chunks.push(chunk));
  request.on("end", () => {
    const body = Buffer.concat(chunks);
    const options = {
      origin: upstream.origin,
      path: request.url,
      method: request.method,
      headers: passed(request.headers),
      body: body.length > 0 ? body : undefined,
    };
    pool.dispatch(options, {
      onRequestStart() {},
      onResponseStart(_, status, headers) {
        response.writeHead(status, passed(headers));
      },
      onResponseData(_, chunk) {
        response.write(chunk);
      },
      onResponseEnd() {
        response.end();
      },
      onResponseError() {
        if (response.headersSent) response.destroy();
        else response.writeHead(502).end();
      },
    });
  });
});
server.listen(0, "127.0.0.1", () => {
  console.log(`LISTENING http://127.0.0.1:${server.address().port}${basePath}`);
});
process.once("SIGTERM", () => {
  server.close();
  server.closeAllConnections();
  pool.close();
});
