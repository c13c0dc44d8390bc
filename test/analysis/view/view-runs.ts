/**
 * Committed probes' runs in one temp folder for the show and view tests: the runs those commands
 * read, made the way a user makes them, never the checkout's runs/. They are copies of the suite's
 * shared runs (test/fixtures/shared-runs.ts), since the commands may write into a run's folder.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "vitest";
import { Capture } from "../../../src/capture/capture.js";
import { PROJECT_ROOT } from "../../../src/project-root.js";
import { codecFor } from "../../../src/providers/codecs.js";
import { runInProcess } from "../../fixtures/cli-in-process.js";
import { copySharedRuns } from "../../fixtures/shared-runs.js";
import { runHandProbe } from "../hand-runs.js";

/** A command that must succeed, run in this process (test/fixtures/cli-in-process.ts): the page is what is tested. */
export async function viewCli(...args: string[]): Promise<string> {
  const child = await runInProcess({}, ...args);
  expect(child.stderr).toBe("");
  expect(child.status).toBe(0);
  return child.stdout;
}

/** Copies each probe's run in; returns the temp folder and its runs/ (one folder per probe). */
export async function runProbesInto(names: string[]): Promise<{ base: string; runs: string }> {
  const base = mkdtempSync(join(tmpdir(), "pp-view-"));
  const runs = join(base, "runs");
  await copySharedRuns(names, runs);
  return { base, runs };
}

/**
 * A run of `name` in `base`'s runs/ on Anthropic Messages whose prompts are long enough that the run
 * stores its bodies in parts (capture/body-parts.ts): three requests, each sending the ones before.
 */
export async function runPartedProbe(base: string, name: string): Promise<void> {
  const long = (word: string) => Array.from({ length: 2500 }, (_, i) => `${word}${i % 17}`).join(" ");
  await runHandProbe(
    base,
    name,
    `name: ${name}
agent: { tools: read, noSkills: true }
model:
  api: anthropic-messages
  script:
    - text: first answer
    - text: second answer
    - text: done
prompts:
  - "${long("alpha")}"
  - "${long("beta")}"
  - "${long("gamma")}"
`,
  );
}

/** The real Claude Code's three tool-search bodies (test/fixtures/real-agents) captured as one run. */
export async function toolSearchRun(dir: string): Promise<void> {
  const fixture = JSON.parse(
    readFileSync(join(PROJECT_ROOT, "test/fixtures/real-agents/claude-code-2.1.328-tool-search.json"), "utf8"),
  ) as { requests: { body: string }[] };
  const capture = new Capture({ run: "ts", probe: "ts", dir, db: null, markers: {}, codecFor });
  for (const [i, { body }] of fixture.requests.entries()) {
    const request = { kind: "loop", api: "anthropic-messages", url: "http://127.0.0.1:8787/v1", body } as const;
    const outcome = { body: "", status: 200, firstByteMs: 0, ending: "complete" } as const;
    await capture.recordExchange(request, outcome, new Date(Date.UTC(2026, 11, 4, 10, 0, i)).toISOString(), 1);
  }
  capture.close();
}

/**
 * A working session as Claude Code sends it, captured as one run: each of `requests` Messages bodies
 * sends the same tools and system prompt and the whole conversation again, one tool call and its
 * result (about 3 KB of words, different in each) longer than the one before. Returns the bodies.
 */
export async function growingSessionRun(dir: string, requests: number): Promise<string[]> {
  let seed = 39;
  const random = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  const letters = "abcdefghijklmnopqrstuvwxyz";
  const vocabulary = Array.from({ length: 2000 }, () =>
    Array.from({ length: 3 + Math.floor(random() * 7) }, () => letters[Math.floor(random() * 26)]).join(""),
  );
  const words = (n: number) => Array.from({ length: n }, () => vocabulary[Math.floor(random() * 2000)]).join(" ");
  const tools = ["Read", "Edit", "Bash"].map((name) => ({
    name,
    description: words(60),
    input_schema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
  }));
  const system = [{ type: "text", text: words(300) }];
  const messages: unknown[] = [{ role: "user", content: words(40) }];
  const capture = new Capture({ run: "growing", probe: "growing", dir, db: null, markers: {}, codecFor });
  const bodies: string[] = [];
  for (let i = 0; i < requests; i++) {
    const body = JSON.stringify({ model: "claude-sonnet-4-5", max_tokens: 4096, system, tools, messages });
    bodies.push(body);
    const request = { kind: "loop", api: "anthropic-messages", url: "http://127.0.0.1:8787/v1", body } as const;
    const outcome = { body: "", status: 200, firstByteMs: 0, ending: "complete" } as const;
    await capture.recordExchange(request, outcome, new Date(Date.UTC(2026, 11, 5, 3, 0, i)).toISOString(), 1);
    const id = `toolu_${i}`;
    messages.push(
      { role: "assistant", content: [{ type: "tool_use", id, name: "Read", input: { path: `src/f${i}.ts` } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: id, content: words(450) }] },
    );
  }
  capture.close();
  return bodies;
}
