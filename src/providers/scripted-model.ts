import { CheckFailed } from "../errors.js";
import type { Codec, ScriptedReply, Transport, WireApi, WireRequest } from "./types.js";

/** One model turn of a probe's script. `args` is an object, or a raw string sent as the arguments text. */
export type ScriptStep =
  | { text: string }
  | { call: string; args?: Record<string, unknown> | string }
  | { calls: { call: string; args?: Record<string, unknown> | string }[] };

export class ScriptExhausted extends CheckFailed {}

function toReply(step: ScriptStep, turn: number): ScriptedReply {
  if ("text" in step) return { kind: "text", text: step.text };
  const calls = "calls" in step ? step.calls : [step];
  return {
    kind: "tool_calls",
    calls: calls.map((c, i) => ({
      id: `call_${turn}_${i + 1}`,
      name: c.call,
      arguments: typeof c.args === "string" ? c.args : JSON.stringify(c.args ?? {}),
    })),
  };
}

export interface ScriptedModelOptions {
  /**
   * Token counts to answer with (the mock's estimate, which may wait for a token cache or the tokenizer);
   * without it a reply carries no usage.
   */
  usage?: (request: WireRequest, reply: ScriptedReply) => ScriptedReply["usage"] | Promise<ScriptedReply["usage"]>;
}

/**
 * A model that answers each request with the next step of its script, in the request's own wire
 * format (a codec per API, or one for all): SSE, or one JSON body when the request turned streaming off. Loop requests and sampling
 * requests read separate scripts, so a nested sampling request never shifts the agent's turns.
 * Running out is a probe failure, never a silent default answer.
 */
export function createScriptedModel(
  codec: Codec | ((api: WireApi) => Codec),
  scripts: { loop: ScriptStep[]; sampling?: ScriptStep[] },
  options: ScriptedModelOptions = {},
): Transport & { remaining(): { loop: number; sampling: number } } {
  const used = { loop: 0, sampling: 0 };
  const transport = async (request: WireRequest) => {
    const lane = request.kind === "sampling" ? "sampling" : "loop";
    const script = (lane === "sampling" ? scripts.sampling : scripts.loop) ?? [];
    const index = used[lane]++;
    const step = script[index];
    if (!step) {
      throw new ScriptExhausted(
        `scripted model: ${lane} request ${index + 1} was made but the probe's ${lane === "loop" ? "model.script" : "model.sampling"} has only ${script.length} step(s)`,
      );
    }
    const reply = toReply(step, index + 1);
    const usage = await options.usage?.(request, reply);
    const render = typeof codec === "function" ? codec(request.api) : codec;
    const { chunks } = render.renderReply(usage ? { ...reply, usage } : reply, request.body, request.url);
    return (async function* () {
      yield* chunks;
    })();
  };
  return Object.assign(transport, {
    remaining: () => ({
      loop: scripts.loop.length - used.loop,
      sampling: (scripts.sampling?.length ?? 0) - used.sampling,
    }),
  });
}
