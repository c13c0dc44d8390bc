/**
 * Credentials in every form a client may send them, through the proxy CLI in front of the mock on
 * all three wire APIs: none of their values may reach any file the run wrote, JSONL or SQLite.
 */
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type MockServer, startMockServer } from "../../src/capture/mock-server.js";
import type { RequestRecord } from "../../src/capture/types.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";
import { type CliServer, filesContaining, jsonl, startCli } from "./http-harness.js";

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  removeTempDirs();
});

/** A value no file could hold by chance. */
const secret = (form: string) => `${form}-${randomBytes(9).toString("hex")}`;

/** Each form: where the value travels (a header or a query parameter) and its name. */
const HEADER_FORMS = [
  ["authorization", (v: string) => `Bearer ${v}`],
  ["x-api-key", (v: string) => v],
  ["api-key", (v: string) => v],
  ["x-goog-api-key", (v: string) => v],
  ["openai-organization", (v: string) => v],
  ["openai-project", (v: string) => v],
  ["anthropic-organization", (v: string) => v],
  ["anthropic-project", (v: string) => v],
  ["cookie", (v: string) => `session=${v}; theme=dark`],
  ["proxy-authorization", (v: string) => `Basic ${Buffer.from(`user:${v}`).toString("base64")}`],
  ["x-auth-token", (v: string) => v],
  ["ocp-apim-subscription-key", (v: string) => v],
  ["x-tenant-pass", (v: string) => v],
] as const;
const QUERY_FORMS = [
  "key",
  "api_key",
  "access_token",
  "client_secret",
  "X-Amz-Signature",
  "sig",
  "code",
  "x-tenant-pass",
];

const BODIES = {
  "chat/completions": (n: number) =>
    JSON.stringify({ model: "m", messages: [{ role: "user", content: `visible-${n}` }], stream: true }),
  messages: (n: number) =>
    JSON.stringify({ model: "m", max_tokens: 9, messages: [{ role: "user", content: `visible-${n}` }], stream: true }),
  responses: (n: number) => JSON.stringify({ model: "m", input: `visible-${n}`, stream: false }),
};

describe("credential redaction", () => {
  it("keeps the values of 20+ credential forms out of every file the proxy and the mock wrote, on all three APIs", async () => {
    const runs = tempDir("redaction-");
    const script = Array.from({ length: 3 }, () => ({ text: "ok" }));
    const mock: MockServer = await startMockServer({ name: "redact", markers: {}, script }, { runsDir: runs });
    closers.push(() => mock.close());
    const userinfo = secret("userinfo");
    const upstream = mock.baseUrl.replace("http://", `http://probe-user:${userinfo}@`);
    const cli: CliServer = await startCli([
      "proxy",
      "--upstream",
      upstream,
      "--runs",
      runs,
      "--redact",
      "X-Tenant-Pass",
    ]);
    closers.push(() => cli.stop());

    const values: Record<string, string> = { userinfo };
    for (const [n, path] of (Object.keys(BODIES) as (keyof typeof BODIES)[]).entries()) {
      const headers: Record<string, string> = { "content-type": "application/json" };
      for (const [name, form] of HEADER_FORMS) {
        values[`${path} ${name}`] = secret(name);
        headers[name] = form(values[`${path} ${name}`]!);
      }
      for (const name of QUERY_FORMS) values[`${path} ?${name}`] = secret(name);
      const query = QUERY_FORMS.map((name) => `${name}=${values[`${path} ?${name}`]}`).join("&");
      const reply = await fetch(`${cli.url}/${path}?${query}&trace=visible`, {
        method: "POST",
        headers,
        body: BODIES[path](n),
      });
      expect(reply.status, path).toBe(200);
      await reply.text();
    }
    expect(await cli.stop()).toBe(0);
    await mock.close();

    expect(HEADER_FORMS.length + QUERY_FORMS.length + 1).toBeGreaterThanOrEqual(20);
    for (const [form, value] of Object.entries(values)) expect(filesContaining(runs, value), form).toEqual([]);
    // The run did write what it should: every request is recorded, and the visible text is stored.
    const records = jsonl<RequestRecord>(join(runs, "proxy", "requests.jsonl"));
    expect(records.map((r) => r.api)).toEqual(["openai-completions", "anthropic-messages", "openai-responses"]);
    for (const n of [0, 1, 2]) expect(filesContaining(runs, `visible-${n}`).length).toBeGreaterThan(0);
    expect(filesContaining(runs, "trace=visible").length).toBeGreaterThan(0);
  });
});
