import { cpSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveRun } from "../../../src/analysis/load-run.js";
import { rebuildBody } from "../../../src/analysis/view/browser/rebuild-body.js";
import type { ItemOf, ViewItem, ViewRequest } from "../../../src/analysis/view/types.js";
import { writeViewPage } from "../../../src/analysis/view/view-page.js";
import { loadTokenCounter } from "../../../src/capture/tokens.js";
import { captureRun, codexDefaultModelBodies } from "../../fixtures/api-sessions.js";
import { runHandProbe } from "../hand-runs.js";
import { savedPageData } from "./saved-page.js";
import { growingSessionRun, runPartedProbe, runProbesInto, toolSearchRun } from "./view-runs.js";

let base: string;
let runs: string;
beforeAll(async () => {
  ({ base, runs } = await runProbesInto(["seq-search", "seq-search-anthropic"]));
  await runPartedProbe(base, "parted");
  await runHandProbe(
    base,
    "hostile",
    `name: hostile
agent: { tools: read, noSkills: true }
model:
  script:
    - text: "ok </script><script>alert(1)</script>"
    - text: done
prompts:
  - "first </script><!-- \\u2028 line sep \\u2029 para"
  - "second"
`,
  );
});
afterAll(() => rmSync(base, { recursive: true, force: true }));

/** The two data documents of a page, the request index and the item table, parsed whole. */
function pageData(html: string) {
  const { index, items } = savedPageData(html);
  return {
    text: index + items,
    data: {
      ...(JSON.parse(index) as { requests: ViewRequest[]; meta: unknown }),
      items: JSON.parse(items) as ViewItem[],
    },
  };
}

/** Each request's wire body as the page's script rebuilds it from its frame and items (browser/rebuild-body.ts). */
function rebuiltBodies(data: ReturnType<typeof pageData>["data"]): string[] {
  const item = (id: number) => data.items[id]!;
  return data.requests.map((r) => {
    const messages: string[] = [];
    for (let n = r.M; n >= 0; n = item(n)[1] as number) messages.unshift(item(item(n)[2] as number)[4] as string);
    return rebuildBody(item(r.F) as ItemOf<"frame">, (id) => (item(id) as ItemOf<"piece">)[1], {
      tools: (item(r.T)[1] as number[]).map((id) => item(id)[4] as string),
      system: (item(r.S)[1] as number[]).map((id) => item(id)[3] as string),
      messages,
    });
  });
}

async function page(run: string) {
  const out = join(base, `${run.replace(/\W/g, "_")}.html`);
  await writeViewPage(out, [resolveRun(run, { runsDir: runs })], null, {
    counter: await loadTokenCounter(),
    markers: {},
    rawBytes: 0,
  });
  return readFileSync(out, "utf8");
}

describe("view page data", () => {
  it("carries the provider's cache word beside ours only for a run that asked (issue 27)", async () => {
    const asked = pageData(await page("seq-search-anthropic")).data.requests;
    expect(asked.map((r) => r.cd)).toEqual([
      "provider (anthropic): first-turn",
      "provider (anthropic): miss: tools_changed, agrees",
      "provider (anthropic): hit, agrees",
      "provider (anthropic): hit, agrees",
      "provider (anthropic): miss: tools_changed, agrees",
      "provider (anthropic): hit, agrees",
    ]);
    expect(pageData(await page("seq-search")).data.requests.some((r) => "cd" in r)).toBe(false);
  });

  it("stores each tool definition, system prompt and message once, however many requests send it", async () => {
    const { data } = pageData(await page("seq-search"));
    expect(data.requests.map((r) => r.s)).toEqual([1, 2, 3, 4, 5, 6]);
    const kinds = (k: string) => data.items.filter((i) => i[0] === k);
    // mcp, a_tool1, b_tool2; three tool sets; three prompts (each added tool adds a line)
    expect(kinds("tool").map((t) => t[1])).toEqual(["mcp", "a_tool1", "b_tool2"]);
    expect(kinds("tools")).toHaveLength(3);
    expect(kinds("sys")).toHaveLength(3);
    const payloads = readFileSync(join(runs, "seq-search", "payloads.jsonl"), "utf8")
      .split("\n")
      .filter(Boolean);
    const lastBody = JSON.parse(JSON.parse(payloads.filter((l) => l.includes('"type":"request"')).at(-1)!).body);
    // the last request carries every message of the run once: one item per distinct message
    expect(kinds("msg")).toHaveLength(lastBody.messages.length - 1);
    expect(data.requests[1]!.tc).toEqual(["+a_tool1"]);
    expect(data.requests[4]!.tc).toEqual(["+b_tool2"]);
  });

  it.each(["seq-search", "parted"])("%s: a request's frame and items rebuild its exact wire body", async (run) => {
    const { data } = pageData(await page(run));
    // Joined from the run's parts where it stored them so (and checked against its hash).
    const bodies = [...resolveRun(run, { runsDir: runs }).payloads()].map((p) => p.body);
    expect(bodies.length).toBeGreaterThan(2);
    expect(rebuiltBodies(data)).toEqual(bodies);
  });

  it("a run stored in parts gives the page its bodies stored whole would give", async () => {
    const payloads = readFileSync(join(runs, "parted", "payloads.jsonl"), "utf8");
    expect(payloads).toContain('"type":"part"');
    // The same run with every body stored whole, as runs were before bodies were stored in parts.
    const wholeDir = join(base, "parted-whole");
    cpSync(join(runs, "parted"), wholeDir, { recursive: true });
    const source = resolveRun(join(runs, "parted"), { runsDir: runs });
    const rows = [...source.payloads()].map((p) => JSON.stringify({ type: "request", ...p }));
    writeFileSync(join(wholeDir, "payloads.jsonl"), `${rows.join("\n")}\n`);
    const [parted, whole] = [await page("parted"), await page(wholeDir)].map((html) => pageData(html).data);
    expect(parted.items).toEqual(whole!.items);
    expect(parted.requests).toEqual(whole!.requests);
    expect(parted.items.filter((i) => i[0] === "msg").length).toBeGreaterThan(3);
    // The last request's messages' holes are one run in its frame.
    const frames = parted.items.filter((i) => i[0] === "frame").map((i) => i[1] as string);
    expect(frames.at(-1)).toContain("\u00024\u0002\u0000M,");
  });

  it("names the deferred tools no message loads, which the capture counted at 0 tokens (Claude Code's tool search)", async () => {
    await toolSearchRun(join(base, "tool-search"));
    const { data } = pageData(await page(join(base, "tool-search")));
    const toolNames = (r: ViewRequest) =>
      (data.items[r.T] as ItemOf<"tools">)[1].map((id) => (data.items[id] as ItemOf<"tool">)[1]);
    const unloaded = data.requests.map((r) => (r.ud ?? []).map((i) => toolNames(r)[i]));
    // The placeholder is never loaded; stub_echo, sent deferred once ToolSearch's tool_reference names it, is.
    expect(unloaded).toEqual([["DeferredToolPlaceholder"], ["DeferredToolPlaceholder"], ["DeferredToolPlaceholder"]]);
    expect(toolNames(data.requests[2]!)).toContain("mcp__probe-stub__stub_echo");
  });

  it("a session that re-sends its conversation: the page is no larger than the parts it shows, each once (issue 39)", async () => {
    const dir = join(base, "growing");
    const bodies = await growingSessionRun(dir, 60);
    // What the page shows, each distinct tool definition, system block and message once.
    const parts = new Set<string>();
    for (const body of bodies) {
      const { tools, system, messages } = JSON.parse(body) as Record<string, unknown[]>;
      for (const part of [...tools!, ...system!, ...messages!]) parts.add(JSON.stringify(part));
    }
    const partBytes = [...parts].reduce((n, part) => n + Buffer.byteLength(part), 0);
    const html = await page(dir);
    expect(partBytes).toBeGreaterThan(150_000);
    expect(Buffer.byteLength(html)).toBeLessThanOrEqual(partBytes);
    // ... and it holds them all: the last request's messages are the run's, each an item of the page.
    const { data } = pageData(html);
    expect(data.requests).toHaveLength(60);
    const shown = new Set(data.items.filter((i) => i[0] === "msg").map((i) => i[4] as string));
    expect(shown.size).toBe(119);
    expect(JSON.parse(bodies.at(-1)!).messages.every((m: unknown) => shown.has(JSON.stringify(m)))).toBe(true);
  });

  it("a Codex session on its default model, its tools in namespaces: the page is no larger than the parts it shows, each once (issue 39)", async () => {
    const dir = join(base, "codex-default-model");
    const bodies = codexDefaultModelBodies(30);
    await captureRun(
      dir,
      "openai-responses",
      bodies.map((body) => ({ url: "/v1/responses", body })),
    );
    // What the page shows: each distinct input item (the tools' namespaces among them) once.
    const parts = new Set<string>();
    for (const body of bodies) for (const item of JSON.parse(body).input as unknown[]) parts.add(JSON.stringify(item));
    const partBytes = [...parts].reduce((n, part) => n + Buffer.byteLength(part), 0);
    const html = await page(dir);
    expect(Buffer.byteLength(html)).toBeLessThanOrEqual(partBytes);
    const { data } = pageData(html);
    expect(data.requests).toHaveLength(32);
    // No frame holds a part's text: the namespaces' item and a developer message of two text parts
    // are pieces stored once, which every frame names.
    const frames = data.items.filter((i): i is ItemOf<"frame"> => i[0] === "frame");
    expect(frames.some((f) => f[1].includes('"type":"namespace"'))).toBe(false);
    // What a frame holds of its own is the 2 KB of fields around the input, not the 55 KB of a body.
    expect(Math.max(...frames.map((f) => f[1].length))).toBeLessThan(4000);
    const pieces = data.items.flatMap((i, id) => (i[0] === "piece" ? [id] : []));
    expect(pieces).toHaveLength(2);
    expect(frames.map((f) => f[2])).toEqual(frames.map(() => pieces));
    // The tools are listed and counted as the codec reads them, and every body is rebuilt exactly.
    const toolNames = (data.items[data.requests[0]!.T] as ItemOf<"tools">)[1].map(
      (id) => (data.items[id] as ItemOf<"tool">)[1],
    );
    expect(toolNames).toHaveLength(11);
    expect(toolNames).toContain("functions.exec");
    expect(rebuiltBodies(data)).toEqual(bodies);
  });

  it("text holding </script>, <!-- and U+2028/2029 cannot end the data element and survives intact", async () => {
    const html = await page("hostile");
    // the index, the page's script and the items each close once
    expect(html.match(/<\/script/gi)).toHaveLength(3);
    const { text, data } = pageData(html);
    expect(text).not.toMatch(/[<\u2028\u2029]/);
    const texts = data.items.filter((i) => i[0] === "msg").map((i) => i[4] as string);
    expect(texts.some((t) => t.includes("first </script><!-- \u2028 line sep \u2029 para"))).toBe(true);
    expect(texts.some((t) => t.includes("ok </script><script>alert(1)</script>"))).toBe(true);
  });
});
