/**
 * The model's answer to one captured request, read from the response payload the capture stored: its
 * text, thinking (its size), tool calls with their arguments and stop reason (the request's codec and
 * providers/reply-facts.ts), how it came (status, time to first byte, duration, error — from the
 * record), and its usage as the provider reported it beside our own count of the prompt.
 */
import type { RequestRecord } from "../../capture/types.js";
import { codecFor } from "../../providers/codecs.js";
import { type ReplyFacts, replyFacts } from "../../providers/reply-facts.js";
import type { ModelResponse, ToolCall, Usage, WireApi } from "../../providers/types.js";
import type { ResponsePayload, RunSource } from "../load-run.js";

export interface DecodedReply {
  /** HTTP status (null: none came); absent for a run made in process, which has no HTTP. */
  status?: number | null;
  ending?: RequestRecord["ending"];
  error: string | null;
  firstByteMs: number | null;
  durationMs: number;
  /** Whether a response body was stored at all. */
  stored: boolean;
  /** Why the stored body could not be read as the API's reply (cut short, not JSON…); null when it was. */
  unreadable: string | null;
  text: string;
  toolCalls: ToolCall[];
  facts: ReplyFacts;
  /** Usage as the response reported it (`source` says whether a provider or a mock's estimate). */
  usage: Usage | null;
  /** Our count of the prompt (the request's tokens), beside the provider's. */
  ourPromptTokens: number | null;
  encoding: string | null;
}

const NO_FACTS: ReplyFacts = { stopReason: null, thinkingChars: 0, hiddenThinking: 0 };

async function parseReply(api: WireApi, body: string): Promise<{ response: ModelResponse; facts: ReplyFacts }> {
  const stream = (async function* () {
    yield body;
  })();
  return { response: await codecFor(api).parseStream(stream), facts: replyFacts(api, body) };
}

/** The reply to `record`'s request in `source`; a run that kept no bodies says so in `stored`. */
export function decodeReply(source: RunSource, record: RequestRecord): Promise<DecodedReply> {
  return replyOf(record, source.hasPayloads ? source.payload(record.seq, "response") : null);
}

/** The reply to `record`'s request from its stored response (null: none stored). */
export async function replyOf(record: RequestRecord, payload: ResponsePayload | null): Promise<DecodedReply> {
  const head = {
    ...(record.status !== undefined && { status: record.status }),
    ...(record.ending !== undefined && { ending: record.ending }),
    error: record.error ?? null,
    firstByteMs: record.firstByteMs ?? null,
    durationMs: record.durationMs,
    usage: record.usage,
    ourPromptTokens: record.tokens?.total ?? null,
  };
  const empty = { text: "", toolCalls: [], facts: NO_FACTS, encoding: null };
  if (!payload) return { ...head, ...empty, stored: false, unreadable: null };
  const encoding = payload.encoding ?? null;
  if (payload.body === "") return { ...head, ...empty, encoding, stored: true, unreadable: "the body is empty" };
  try {
    const { response, facts } = await parseReply(record.api as WireApi, payload.body);
    return {
      ...head,
      text: response.message.text,
      toolCalls: response.message.toolCalls,
      facts,
      // The record holds the usage the capture read; a body read again gives the same, or more (a record without it).
      usage: record.usage ?? response.usage ?? null,
      encoding,
      stored: true,
      unreadable: null,
    };
  } catch (error) {
    return { ...head, ...empty, encoding, stored: true, unreadable: (error as Error).message };
  }
}
