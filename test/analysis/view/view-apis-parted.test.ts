/**
 * A body's view items and frame made part by part (analysis/view/part-items.ts, element-segments.ts)
 * are the ones its whole dissection gives (view-data.ts's whole path: the codec's dissection of the
 * body, its frame cut by bodyFrame), for every wire API (test/fixtures/api-sessions.ts: real Codex
 * and Gemini CLI sessions, the runtime's pi-shaped bodies); a page of such a run, captured, is the same
 * whether its bodies are stored in parts or whole, and where the parts make a body's frame, the
 * page never joins a body.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type LazyPayload, type RunSource, resolveRun } from "../../../src/analysis/load-run.js";
import { rebuildBody } from "../../../src/analysis/view/browser/rebuild-body.js";
import { PartItems, type SegmentItems } from "../../../src/analysis/view/part-items.js";
import type { ViewItem } from "../../../src/analysis/view/types.js";
import { bodyFrame } from "../../../src/analysis/view/view-data.js";
import { writeViewPage } from "../../../src/analysis/view/view-page.js";
import { loadTokenCounter } from "../../../src/capture/tokens.js";
import { codecFor } from "../../../src/providers/codecs.js";
import type { WireApi } from "../../../src/providers/types.js";
import { captureRun, SESSIONS } from "../../fixtures/api-sessions.js";
import { partedBody } from "../../fixtures/parted-body.js";
import { savedPageData } from "./saved-page.js";

const base = mkdtempSync(join(tmpdir(), "pp-view-apis-"));
afterAll(() => rmSync(base, { recursive: true, force: true }));

/** The run with every body stored whole, as runs were before bodies were stored in parts. */
function wholeCopy(dir: string): string {
  const whole = `${dir}-whole`;
  const source = resolveRun(dir, { runsDir: base });
  const rows = [...source.payloads()].map((p) => JSON.stringify({ type: "request", ...p }));
  cpSync(dir, whole, { recursive: true });
  writeFileSync(join(whole, "payloads.jsonl"), `${rows.join("\n")}\n`);
  return whole;
}

/** The run's source, each body's joins counted. */
function counted(dir: string): { source: RunSource; joins: () => number } {
  const source = resolveRun(dir, { runsDir: base });
  let joins = 0;
  const lazyPayloads = function* (): Generator<LazyPayload> {
    for (const payload of source.lazyPayloads()) {
      const load = () => {
        joins++;
        return payload.load();
      };
      yield { ...payload, stored: () => payload.stored(), load };
    }
  };
  return { source: Object.assign(Object.create(source) as RunSource, { lazyPayloads }), joins: () => joins };
}

async function pageOf(source: RunSource, name: string): Promise<{ index: string; items: ViewItem[] }> {
  const out = join(base, `${name}.html`);
  await writeViewPage(out, [source], null, { counter: await loadTokenCounter(), markers: {}, rawBytes: 0 });
  const { index, items } = savedPageData(readFileSync(out, "utf8"));
  return { index, items: JSON.parse(items) as ViewItem[] };
}

/** Pages of the run parted and whole; returns how many bodies the parted page joined. */
async function compare(name: string, api: WireApi, bodies: { url: string; body: string }[]): Promise<number> {
  const dir = join(base, name);
  await captureRun(dir, api, bodies);
  expect(readFileSync(join(dir, "payloads.jsonl"), "utf8")).toContain('"type":"part"');
  const parted = counted(dir);
  const page = await pageOf(parted.source, name);
  const whole = await pageOf(resolveRun(wholeCopy(dir), { runsDir: base }), `${name}-whole`);
  expect(page.items).toEqual(whole.items);
  expect(page.index.replace(/"label":"[^"]*"/, "")).toBe(whole.index.replace(/"label":"[^"]*"/, ""));
  expect(page.items.filter((i) => i[0] === "msg").length).toBeGreaterThan(bodies.length);
  return parted.joins();
}

/** Items as the page's table makes them: one id per distinct content, in the order first asked for. */
class ItemLog implements SegmentItems {
  readonly made: string[] = [];
  private readonly ids = new Map<string, number>();
  private id(key: string): number {
    const known = this.ids.get(key);
    if (known !== undefined) return known;
    const id = this.made.push(key) - 1;
    this.ids.set(key, id);
    return id;
  }
  tool(name: string, json: string): number {
    return this.id(`tool ${name} ${json}`);
  }
  systemPart(text: string): number {
    return this.id(`sys ${text}`);
  }
  message(role: string, json: string): number {
    return this.id(`msg ${role} ${json}`);
  }
  /** Stored pieces, apart: the whole path makes none. */
  readonly pieces: string[] = [];
  piece(text: string): number {
    return this.pieces.push(text) - 1;
  }
}

const HOLE = "\u0000";

describe("view items part by part, every wire API", () => {
  for (const [name, make] of Object.entries(SESSIONS)) {
    it(`${name}: the items and frame of the whole body's dissection`, () => {
      const { api, bodies, joinedFrames, pieces = 0 } = make();
      const [partLog, wholeLog] = [new ItemLog(), new ItemLog()];
      let nullFrames = 0;
      const parts = new PartItems(partLog, (letter) => HOLE + letter);
      for (const { url, body } of bodies) {
        const d = codecFor(api).dissect(body, url);
        const expected = {
          tools: d.tools.map((t) => wholeLog.tool(t.name, t.json)),
          system: d.systemParts.map((p) => wholeLog.systemPart(p)),
          messages: d.messages.map((m) => wholeLog.message(m.role, m.json)),
        };
        const made = parts.of(api, partedBody(body))!;
        expect({ tools: made.tools(), system: made.system(), messages: [...made.messages()] }).toEqual(expected);
        const frame = made.frame();
        const texts = {
          tools: d.tools.map((t) => t.json),
          system: d.systemParts,
          messages: d.messages.map((m) => m.json),
        };
        const piece = (id: number) => partLog.pieces[id]!;
        if (frame === null) {
          nullFrames++;
          // The page cuts the joined body then: the exact body again from that frame too.
          expect(rebuildBody(["frame", bodyFrame(body, d)], piece, texts)).toBe(body);
          continue;
        }
        // The whole body's cut where no part is a stored piece; the exact body again, pieces or not.
        if (frame.pieces.length === 0) expect(frame.text).toBe(bodyFrame(body, d));
        expect(rebuildBody(["frame", frame.text, frame.pieces], piece, texts)).toBe(body);
      }
      expect(nullFrames).toBe(joinedFrames);
      expect(partLog.pieces).toHaveLength(pieces);
      expect(partLog.made).toEqual(wholeLog.made);
      expect(wholeLog.made.length).toBeGreaterThan(bodies.length);
    });
  }
});

describe("a page of a run stored in parts", () => {
  for (const [name, make] of Object.entries(SESSIONS)) {
    it(`${name}: the page of the run stored whole, joining a body only for a frame the parts do not make`, async () => {
      const { api, bodies, joinedFrames } = make();
      const joins = await compare(name.replace(/\W+/g, "-"), api, bodies);
      expect(joins).toBe(joinedFrames);
    });
  }
});
