/**
 * A scripted provider's side of cache diagnostics (the mock's): every reply of the two APIs that have
 * diagnostics gets an id of its own, each answered request is remembered by that id, and a request that
 * asks is answered from the comparison of the two bodies (cache-diagnosis.ts).
 */

import {
  type DiagnosedApi,
  type DiagnosisOutcome,
  diagnosisField,
  diagnosticsAsked,
  firstDivergence,
  isDiagnosedApi,
  missedTokens,
} from "./cache-diagnosis.js";
import { sseEvent } from "./response-body.js";
import type { Codec, Transport, WireApi, WireDissection } from "./types.js";

/** The fixed ids the codecs render (anthropic-messages.ts, openai-responses.ts), replaced by each reply's own. */
const RENDERED_ID: Record<DiagnosedApi, { text: string; prefix: string }> = {
  "anthropic-messages": { text: '"id":"msg_probe"', prefix: "msg_mock_" },
  "openai-responses": { text: '"id":"resp_probe"', prefix: "resp_mock_" },
};

/**
 * Runs `use` with a token count of texts: at once from a loaded tokenizer, or through a token cache that
 * loads one only for a text it lacks (and may run `use` again with it, so `use` has no side effects).
 */
export type TextMeasure = <T>(use: (count: (text: string) => number) => T) => Promise<T>;

export interface DiagnosedReply {
  chunks: string[];
  /** Call once the reply has been sent whole: until then a comparison with it is still running. */
  sent(): void;
}

export class CacheDiagnoser {
  private issued = 0;
  /** Requests whose replies were sent whole, by reply id. */
  private readonly answered = new Map<string, WireDissection>();
  /** Reply ids handed out whose replies are still being sent. */
  private readonly sending = new Set<string>();

  constructor(
    private readonly codecFor: (api: WireApi) => Codec,
    private readonly measure: TextMeasure,
  ) {}

  /**
   * A rendered reply with its own id and, when the request asked, its diagnostics. Replies of other
   * APIs pass unchanged.
   */
  async answer(api: WireApi, body: string, chunks: string[]): Promise<DiagnosedReply> {
    if (!isDiagnosedApi(api)) return { chunks, sent() {} };
    const dissection = this.codecFor(api).dissect(body);
    const asked = diagnosticsAsked(api, JSON.parse(body));
    const field = asked && diagnosisField(api, await this.outcome(dissection, asked.compareWith));
    const id = `${RENDERED_ID[api].prefix}${++this.issued}`;
    this.sending.add(id);
    return {
      chunks: chunks.map((chunk) => stamp(api, chunk, id, field)),
      sent: () => {
        this.sending.delete(id);
        this.answered.set(id, dissection);
      },
    };
  }

  private async outcome(after: WireDissection, compareWith: string | null): Promise<DiagnosisOutcome> {
    if (compareWith === null) return { kind: "first-turn" };
    if (this.sending.has(compareWith)) return { kind: "pending" };
    const before = this.answered.get(compareWith);
    if (!before) return { kind: "not-found" };
    const divergence = firstDivergence(before, after);
    const missed = await this.measure((count) => missedTokens(before, after, divergence, count));
    return { kind: "compared", divergence, ...missed };
  }
}

/**
 * An in-process transport (the scripted model) answering as the mock does: its reply is handed over
 * whole, so a later request finds it remembered.
 */
export function withCacheDiagnosis(transport: Transport, diagnoser: CacheDiagnoser): Transport {
  return async (request) => {
    const rendered: string[] = [];
    for await (const chunk of await transport(request)) rendered.push(chunk);
    const reply = await diagnoser.answer(request.api, request.body, rendered);
    reply.sent();
    return (async function* () {
      yield* reply.chunks;
    })();
  };
}

/**
 * One chunk with the reply's id and the diagnostics field set on the response object: Anthropic's
 * message (`message_start` when streamed), OpenAI's response (each `response.*` event carrying it).
 */
function stamp(api: DiagnosedApi, chunk: string, id: string, field: [string, unknown] | null): string {
  const { text } = RENDERED_ID[api];
  if (!chunk.includes(text)) return chunk;
  const renamed = chunk.replaceAll(text, `"id":"${id}"`);
  if (!field) return renamed;
  const data = renamed.match(/^data: (.*)$/m);
  if (!data) return JSON.stringify(withField(JSON.parse(renamed), field));
  const event = JSON.parse(data[1]!) as Record<string, unknown>;
  const key = api === "anthropic-messages" ? "message" : "response";
  if (event[key] === null || typeof event[key] !== "object") return renamed;
  const named = renamed.match(/^event: (.*)$/m)?.[1];
  return sseEvent({ ...event, [key]: withField(event[key] as Record<string, unknown>, field) }, named);
}

const withField = (object: Record<string, unknown>, [name, value]: [string, unknown]) => ({ ...object, [name]: value });
