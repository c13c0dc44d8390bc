/**
 * Issue 35: no secret leaves through a copy of a body. Through the proxy CLI in front of the mock,
 * credentials are sent where a record copies them (the model, a tool's name, a parameter's name, the
 * spot where the prefix breaks because a token was rotated) and percent-encoded; afterwards no byte
 * of any file under the runs folder (JSONL, the database read as bytes and through SQL, the view
 * page) nor of the proxy's stderr holds a value or its tail. A folder path under a name that says
 * credential is stored as sent.
 */
import { randomInt } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startMockServer } from "../../src/capture/mock-server.js";
import type { RequestRecord } from "../../src/capture/types.js";
import { cliIn } from "../cli/scratch-cli.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";
import { jsonl, sqlDump, startCli } from "./http-harness.js";

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  removeTempDirs();
});

const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const chars = (count: number) => Array.from({ length: count }, () => ALNUM[randomInt(ALNUM.length)]).join("");

const rotatedFrom = `ghp_${chars(36)}`;
/** The same token rotated: only its last characters differ, so the prefix breaks inside it. */
const rotatedTo = `${rotatedFrom.slice(0, 20)}${chars(20)}`;
const modelKey = `ghp_${chars(36)}`;
const toolKey = `glpat-${chars(24)}`;
const parameterKey = `sk_live_${chars(28)}`;
const dbPassword = `${chars(10)}-${chars(6)}7`;
const awsSecret = `${chars(39)}Q`;
const folder = "/home/dev/.config/gcloud/legacy_credentials";

const secrets = [rotatedFrom, rotatedTo, modelKey, toolKey, parameterKey, dbPassword, awsSecret];

/** Each value and its last 16 characters: a copy cut at the first differing character keeps a tail. */
const needles = secrets.flatMap((value) => [value, value.slice(-16)]);

function chat(system: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    model: "m",
    stream: true,
    messages: [
      { role: "system", content: system },
      { role: "user", content: "deploy" },
    ],
    ...extra,
  });
}

function leaks(dir: string, stderr: string): string[] {
  const found: string[] = [];
  const texts: [string, string][] = [["stderr", stderr]];
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    texts.push([path, readFileSync(path).toString("latin1")]);
    if (entry.name.endsWith(".db")) texts.push([`${path} (SQL)`, sqlDump(path)]);
  }
  for (const [where, text] of texts)
    for (const needle of needles) if (text.includes(needle)) found.push(`${where}: ${needle}`);
  return found;
}

async function post(url: string, body: string): Promise<void> {
  const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body });
  expect(response.status, url).toBe(200);
  await response.text();
}

describe("secrets in copies of a body (issue 35)", () => {
  it("keeps them out of the model, tool and parameter names, the prefix break and every file; finds percent-encoded ones", async () => {
    const scratch = tempDir("secrets-copies-");
    const runs = join(scratch, "runs");
    const script = Array.from({ length: 4 }, () => ({ text: "done" }));
    const mock = await startMockServer({ name: "copies", markers: {}, script }, { runsDir: runs });
    closers.push(() => mock.close());
    const proxy = await startCli(["proxy", "--upstream", mock.baseUrl, "--runs", runs, "--name", "copies"]);
    closers.push(() => proxy.stop());
    const settings = `Deploy with GITHUB_TOKEN=${rotatedFrom} and these settings:\n{"hostCredential":"${folder}"}`;
    await post(`${proxy.url}/chat/completions`, chat(settings));
    await post(`${proxy.url}/chat/completions`, chat(settings.replace(rotatedFrom, rotatedTo)));
    const tool = {
      type: "function",
      function: {
        name: toolKey,
        parameters: { type: "object", properties: { [parameterKey]: { type: "string" } } },
      },
    };
    await post(`${proxy.url}/chat/completions`, chat("You deploy.", { model: modelKey, tools: [tool] }));
    const encoded = `DATABASE_URL=postgres%3A%2F%2Fapp%3A${encodeURIComponent(dbPassword)}%40db.example.com%2Fmain&aws_secret_access_key%3D${encodeURIComponent(awsSecret)}`;
    await post(`${proxy.url}/chat/completions`, chat(`The form posted: ${encoded}`));
    expect(await proxy.stop()).toBe(0);
    await mock.close();

    const dir = join(runs, "copies");
    expect(cliIn(scratch, "view", dir).code).toBe(0);
    const records = jsonl<RequestRecord>(join(dir, "requests.jsonl"));
    expect(records).toHaveLength(4);
    expect(records[1]!.prefix?.breakDetail).toMatch(/redacted|[0-9a-f]{4}/);
    expect(records[2]!.model).toMatch(/^\[redacted:github-token:[0-9a-f]{8}\]$/);
    expect(records[3]!.secrets?.kinds).toMatchObject({ "db-connection": 1, "aws-secret-key": 1 });
    expect(leaks(runs, proxy.stderr())).toEqual([]);
    // A folder path under a name that says credential is no secret: stored as sent.
    expect(readFileSync(join(dir, "payloads.jsonl"), "utf8")).toContain(folder);
  });
});
