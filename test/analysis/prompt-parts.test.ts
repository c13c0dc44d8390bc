/**
 * A body's tools and system parts read part by part (analysis/prompt-parts.ts) are the ones its whole
 * dissection gives, for every wire API (test/fixtures/api-sessions.ts); and `diff` of runs whose
 * tools and system prompt differ, `check --run` and `profile import` read a long session's bodies
 * so, never joining one: every request row of the runs says a wrong hash of its whole body, which
 * any reader that joins a body refuses (as `show` does here).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { PromptReader } from "../../src/analysis/prompt-parts.js";
import { codecFor } from "../../src/providers/codecs.js";
import type { WireApi } from "../../src/providers/types.js";
import { captureRun, runtimeBodies, SESSIONS } from "../fixtures/api-sessions.js";
import { runInProcess } from "../fixtures/cli-in-process.js";
import { partedBody } from "../fixtures/parted-body.js";

const base = mkdtempSync(join(tmpdir(), "pp-prompt-parts-"));
afterAll(() => rmSync(base, { recursive: true, force: true }));

const never = () => {
  throw new Error("the body was joined");
};

describe("tools and system parts part by part", () => {
  for (const [name, make] of Object.entries(SESSIONS)) {
    it(`${name}: the whole body's dissection's, no body joined`, () => {
      const { api, bodies } = make();
      const reader = new PromptReader();
      for (const { url, body } of bodies) {
        const d = codecFor(api).dissect(body, url);
        expect(d.tools.length + d.systemParts.length).toBeGreaterThan(0);
        expect(reader.of(api, partedBody(body), never)).toEqual({ tools: d.tools, systemParts: d.systemParts });
      }
    });
  }
});

/** A captured run whose request rows each name a wrong hash of the whole body: joining one fails. */
async function runJoiningFails(name: string, api: WireApi, variant: string): Promise<string> {
  const dir = join(base, name);
  await captureRun(dir, api, runtimeBodies(api, 6, variant));
  const path = join(dir, "payloads.jsonl");
  const rows = readFileSync(path, "utf8");
  const tampered = rows.replace(/"bodyHash":"[0-9a-f]{64}"/g, `"bodyHash":"${"0".repeat(64)}"`);
  expect(tampered).not.toBe(rows);
  writeFileSync(path, tampered);
  return dir;
}

describe("commands that read a run's prompts never join its bodies", () => {
  it.each(["openai-responses", "google-generative-ai", "anthropic-messages"] as const)("%s", async (api) => {
    const a = await runJoiningFails(`${api}-a`, api, "");
    const b = await runJoiningFails(`${api}-b`, api, "Answer in French.");
    const shown = await runInProcess({}, "show", a, "6");
    expect(shown.stderr).toContain("does not match its bodyHash");

    const diff = await runInProcess({}, "diff", a, b, "--json");
    expect(diff.status).toBe(0);
    const pairs = (JSON.parse(diff.stdout) as { requests: { toolsChanged: unknown[]; systemLines: unknown }[] })
      .requests;
    expect(pairs.at(-1)!.toolsChanged).toEqual(
      ["read", "grep", "edit"].map((name) => ({ name, keys: expect.stringContaining("description") })),
    );
    expect(pairs.at(-1)!.systemLines).toMatchObject({ added: ["Answer in French."], removed: [] });

    const baseline = join(base, `${api}-baseline.json`);
    const check = await runInProcess({}, "check", "--run", a, "--baseline", baseline, "--update");
    expect(check.status).toBe(0);
    expect(check.stderr).not.toContain("bodyHash");
    const written = JSON.parse(readFileSync(baseline, "utf8")) as { requests: { systemLines?: number }[] };
    expect(written.requests.map((r) => r.systemLines)).toEqual(written.requests.map(() => expect.any(Number)));

    const out = join(base, `${api}-profile.json`);
    const imported = await runInProcess({}, "profile", "import", b, "--out", out, "--json");
    expect(imported.status).toBe(0);
    expect(readFileSync(out, "utf8")).toContain("Answer in French.");
  });
});
