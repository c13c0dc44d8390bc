/** Response streams for codec tests, and the round trip every codec's scripted replies must survive. */
import { expect } from "vitest";
import type { Codec, ResponseStream, ToolCall } from "../../src/providers/types.js";

export function streamOf(chunks: string[]): ResponseStream {
  return (async function* () {
    yield* chunks;
  })();
}

/** A text cut into pieces of `size` characters, so parsing is shown not to depend on chunk borders. */
export function cut(text: string, size: number): string[] {
  return Array.from({ length: Math.ceil(text.length / size) }, (_, i) => text.slice(i * size, (i + 1) * size));
}

/**
 * Renders a tool-call reply and a text reply for `streamedBody` and for the same body with
 * `stream: false`, checks the form follows the request, and reads each back to the same message:
 * without usage when the reply has none, with the API's usage object when it has counts.
 * Returns the non-streamed body, for checks of its own.
 */
export async function expectRepliesReadBack(codec: Codec, streamedBody: string, calls: ToolCall[]): Promise<string> {
  const whole = JSON.stringify({ ...(JSON.parse(streamedBody) as object), stream: false });
  for (const body of [streamedBody, whole]) {
    const rendered = codec.renderReply({ kind: "tool_calls", calls }, body);
    expect(rendered.streamed).toBe(body === streamedBody);
    expect((await codec.parseStream(streamOf(rendered.chunks))).message).toEqual({
      role: "assistant",
      text: "",
      toolCalls: calls,
    });
    const text = codec.renderReply({ kind: "text", text: "DONE" }, body);
    const read = await codec.parseStream(streamOf(text.chunks));
    expect(read).toEqual({ message: { role: "assistant", text: "DONE", toolCalls: [] } });
    const counted = codec.renderReply(
      { kind: "text", text: "DONE", usage: { inputTokens: 120, outputTokens: 3 } },
      body,
    );
    expect((await codec.parseStream(streamOf(counted.chunks))).usage).toMatchObject({
      inputTokens: 120,
      outputTokens: 3,
    });
  }
  return whole;
}
