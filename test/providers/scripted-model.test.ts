import { describe, expect, it } from "vitest";
import { CheckFailed } from "../../src/errors.js";
import { DEFAULT_MODEL_REF, resolveModel } from "../../src/providers/models.js";
import { openaiCompletions } from "../../src/providers/openai-completions.js";
import { createScriptedModel, ScriptExhausted } from "../../src/providers/scripted-model.js";
import type { WireRequest } from "../../src/providers/types.js";

const model = resolveModel(DEFAULT_MODEL_REF, "openai-completions");
const request = (kind: WireRequest["kind"]) =>
  openaiCompletions.buildRequest(
    model,
    { systemPrompt: "S", messages: [{ role: "user", content: "u" }], tools: [] },
    kind,
  );
const answer = async (transport: ReturnType<typeof createScriptedModel>, kind: WireRequest["kind"] = "loop") =>
  (await openaiCompletions.parseStream(await transport(request(kind)))).message;

describe("the scripted model", () => {
  it("answers each request with the next script step, in the request's wire format, with call ids per turn", async () => {
    const scripted = createScriptedModel(openaiCompletions, {
      loop: [
        { call: "mcp", args: { search: "x" } },
        { calls: [{ call: "read", args: '{"path":"a"}' }, { call: "ls" }] },
        { text: "DONE" },
      ],
    });
    expect(await answer(scripted)).toEqual({
      role: "assistant",
      text: "",
      toolCalls: [{ id: "call_1_1", name: "mcp", arguments: '{"search":"x"}' }],
    });
    expect((await answer(scripted)).toolCalls).toEqual([
      { id: "call_2_1", name: "read", arguments: '{"path":"a"}' },
      { id: "call_2_2", name: "ls", arguments: "{}" },
    ]);
    expect(await answer(scripted)).toEqual({ role: "assistant", text: "DONE", toolCalls: [] });
    expect(scripted.remaining()).toEqual({ loop: 0, sampling: 0 });
  });

  it("sampling requests read their own script and never shift the loop's turns", async () => {
    const scripted = createScriptedModel(openaiCompletions, {
      loop: [{ text: "loop 1" }, { text: "loop 2" }],
      sampling: [{ text: "sampled" }],
    });
    expect((await answer(scripted)).text).toBe("loop 1");
    expect((await answer(scripted, "sampling")).text).toBe("sampled");
    expect((await answer(scripted)).text).toBe("loop 2");
  });

  it("fails loudly when the script runs out: a ScriptExhausted check failure naming the request and the script", async () => {
    const scripted = createScriptedModel(openaiCompletions, { loop: [{ text: "only" }] });
    await answer(scripted);
    const failure = await scripted(request("loop")).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(ScriptExhausted);
    expect(failure).toBeInstanceOf(CheckFailed);
    expect((failure as Error).message).toBe(
      "scripted model: loop request 2 was made but the probe's model.script has only 1 step(s)",
    );
    await expect(scripted(request("sampling"))).rejects.toThrow(
      "sampling request 1 was made but the probe's model.sampling has only 0 step(s)",
    );
  });
});
