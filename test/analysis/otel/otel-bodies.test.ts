/**
 * `export otel --content full` reads a run's bodies one at a time, each when its span is sent
 * (run-input.ts, chat-span.ts): planning the trace reads none, and sending the chat spans in order
 * reads each body once, after the one before; the texts are the whole body's dissection's.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { type LazyPayload, type RunSource, resolveRun } from "../../../src/analysis/load-run.js";
import { readRunTraceInput } from "../../../src/analysis/otel/run-input.js";
import { planRunTrace } from "../../../src/analysis/otel/run-trace.js";
import { codecFor } from "../../../src/providers/codecs.js";
import { captureRun, runtimeBodies } from "../../fixtures/api-sessions.js";

const base = mkdtempSync(join(tmpdir(), "pp-otel-bodies-"));
afterAll(() => rmSync(base, { recursive: true, force: true }));

it("plans a run's spans without its bodies and reads each when its span is sent", async () => {
  const dir = join(base, "run");
  const bodies = runtimeBodies("openai-responses", 5);
  await captureRun(dir, "openai-responses", bodies);
  const source = resolveRun(dir, { runsDir: base });
  const loaded: number[] = [];
  const lazyPayloads = function* (): Generator<LazyPayload> {
    for (const payload of source.lazyPayloads()) {
      const load = () => {
        loaded.push(payload.seq);
        return payload.load();
      };
      yield { seq: payload.seq, stored: () => payload.stored(), load };
    }
  };
  const watched = Object.assign(Object.create(source) as RunSource, { lazyPayloads });

  const plans = planRunTrace(readRunTraceInput(watched, "full"), { content: "full" });
  const chats = plans.filter((p) => p.id.startsWith("chat:"));
  expect(chats).toHaveLength(5);
  expect(loaded).toEqual([]);
  expect(chats.some((c) => "gen_ai.input.messages" in c.attributes)).toBe(false);

  chats.forEach((chat, i) => {
    const texts = chat.lateAttributes!();
    expect(loaded).toEqual(Array.from({ length: i + 1 }, (_, n) => n + 1));
    const d = codecFor("openai-responses").dissect(bodies[i]!.body);
    expect(JSON.parse(texts["gen_ai.input.messages"] as string)).toHaveLength(d.messages.length);
    expect(JSON.parse(texts["gen_ai.system_instructions"] as string)).toEqual(
      d.systemParts.map((content) => ({ type: "text", content })),
    );
  });
});
