/**
 * What a reply says of itself beyond its message and usage (which the codecs' parseStream reads):
 * why it stopped, in the provider's own word, and how much thinking it carried. Read from a whole
 * response body as the capture stored it — one JSON body, an SSE stream, or Gemini's JSON array.
 */
import { eventPayloads, parseResponseText } from "./response-body.js";
import type { WireApi } from "./types.js";
import { asArray, asObject } from "./wire-json.js";

export interface ReplyFacts {
  /** The provider's stop reason as sent (`end_turn`, `tool_calls`, `STOP`, `completed`…); null when none came. */
  stopReason: string | null;
  /** Characters of thinking text the reply carried (a summary, where the API sends only that). */
  thinkingChars: number;
  /** Thinking blocks whose text the provider withheld (Anthropic `redacted_thinking`, an encrypted reasoning item). */
  hiddenThinking: number;
}

type Objects = Record<string, unknown>[];

/** The body's JSON objects in order: the one body, each SSE event's data, or each element of a JSON array. */
function objectsOf(body: string): Objects {
  if (body.trimStart().startsWith("[")) return asArray(JSON.parse(body)).map(asObject);
  const parsed = parseResponseText(body);
  return parsed.form === "json" ? [asObject(parsed.json)] : eventPayloads(parsed.events);
}

const text = (value: unknown) => (typeof value === "string" ? value : "");

/**
 * Anthropic Messages ("Streaming Messages", "Extended thinking"): `stop_reason` on the message or in
 * message_delta's delta; thinking as `thinking` blocks (whole, or `thinking_delta` pieces) and
 * `redacted_thinking` blocks.
 */
function anthropicFacts(objects: Objects): ReplyFacts {
  const facts: ReplyFacts = { stopReason: null, thinkingChars: 0, hiddenThinking: 0 };
  const block = (b: Record<string, unknown>) => {
    if (b.type === "thinking") facts.thinkingChars += text(b.thinking).length;
    if (b.type === "redacted_thinking") facts.hiddenThinking++;
  };
  for (const o of objects) {
    if (typeof o.stop_reason === "string") facts.stopReason = o.stop_reason;
    for (const b of asArray(o.content)) block(asObject(b));
    if (o.type === "content_block_start") block(asObject(o.content_block));
    const delta = asObject(o.delta);
    if (o.type === "content_block_delta" && delta.type === "thinking_delta")
      facts.thinkingChars += text(delta.thinking).length;
    if (o.type === "message_delta" && typeof delta.stop_reason === "string") facts.stopReason = delta.stop_reason;
  }
  return facts;
}

/**
 * OpenAI chat completions: `finish_reason` of the first choice (the last non-null one of a stream);
 * thinking as `reasoning_content` (DeepSeek, Qwen) or `reasoning` (OpenRouter), on the message or its deltas.
 */
function completionsFacts(objects: Objects): ReplyFacts {
  const facts: ReplyFacts = { stopReason: null, thinkingChars: 0, hiddenThinking: 0 };
  for (const o of objects) {
    const choice = asObject(asArray(o.choices)[0]);
    if (typeof choice.finish_reason === "string") facts.stopReason = choice.finish_reason;
    const said = asObject(choice.message ?? choice.delta);
    facts.thinkingChars += text(said.reasoning_content).length + text(said.reasoning).length;
  }
  return facts;
}

/**
 * OpenAI Responses: the response's `status`, with `incomplete_details.reason` when it is
 * `incomplete`; thinking as `reasoning` output items' summary texts (encrypted content is withheld).
 * A stream's last `response.*` event carrying the response object holds the whole of it.
 */
function responsesFacts(objects: Objects): ReplyFacts {
  const facts: ReplyFacts = { stopReason: null, thinkingChars: 0, hiddenThinking: 0 };
  let response: Record<string, unknown> | null = null;
  for (const o of objects) {
    if (o.object === "response") response = o;
    else if (o.response !== undefined && asObject(o.response).object === "response") response = asObject(o.response);
  }
  if (!response) return facts;
  const reason = asObject(response.incomplete_details).reason;
  facts.stopReason =
    typeof response.status === "string"
      ? `${response.status}${typeof reason === "string" ? ` (${reason})` : ""}`
      : null;
  for (const item of asArray(response.output).map(asObject)) {
    if (item.type !== "reasoning") continue;
    for (const part of asArray(item.summary)) facts.thinkingChars += text(asObject(part).text).length;
    if (item.encrypted_content !== undefined) facts.hiddenThinking++;
  }
  return facts;
}

/** Gemini generateContent: the first candidate's `finishReason`; thinking as parts marked `thought: true`. */
function geminiFacts(objects: Objects): ReplyFacts {
  const facts: ReplyFacts = { stopReason: null, thinkingChars: 0, hiddenThinking: 0 };
  for (const o of objects) {
    const candidate = asObject(asArray(o.candidates)[0]);
    if (typeof candidate.finishReason === "string") facts.stopReason = candidate.finishReason;
    for (const part of asArray(asObject(candidate.content).parts).map(asObject))
      if (part.thought === true) facts.thinkingChars += text(part.text).length;
  }
  return facts;
}

/**
 * Bedrock Converse: `stopReason` on the response or in `messageStop`; thinking as `reasoningContent`
 * blocks (`reasoningText.text`, or `redactedContent` withheld) and their stream deltas (`text`).
 */
function converseFacts(objects: Objects): ReplyFacts {
  const facts: ReplyFacts = { stopReason: null, thinkingChars: 0, hiddenThinking: 0 };
  const reasoning = (value: unknown) => {
    const r = asObject(value);
    facts.thinkingChars += text(asObject(r.reasoningText).text).length + text(r.text).length;
    if (r.redactedContent !== undefined) facts.hiddenThinking++;
  };
  for (const o of objects) {
    const stop = o.stopReason ?? asObject(o.messageStop).stopReason;
    if (typeof stop === "string") facts.stopReason = stop;
    for (const b of asArray(asObject(asObject(o.output).message).content)) reasoning(asObject(b).reasoningContent);
    reasoning(asObject(asObject(o.contentBlockDelta).delta).reasoningContent);
  }
  return facts;
}

const FACTS: Record<WireApi, (objects: Objects) => ReplyFacts> = {
  "anthropic-messages": anthropicFacts,
  "openai-completions": completionsFacts,
  "openai-responses": responsesFacts,
  "google-generative-ai": geminiFacts,
  "bedrock-converse": converseFacts,
};

/** The facts of a whole response body; a body that does not parse (cut short, not JSON) throws. */
export function replyFacts(api: WireApi, body: string): ReplyFacts {
  return FACTS[api](objectsOf(body));
}
