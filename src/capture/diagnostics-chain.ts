/**
 * `--cache-diagnostics`: the proxy asks the provider for its cache diagnostics on the agent's behalf.
 * Each Messages or Responses request is chained to the latest response of its lineage — the same API,
 * the same model and the same first message (docs/capture.md says why) — by adding Anthropic's
 * `diagnostics.previous_message_id` or OpenAI's `prompt_cache_options.comparison_response_id` to the
 * body sent upstream. The capture keeps the body as the agent sent it and is told what was added.
 * Runs on the relay's thread, for opted-in requests only.
 */
import { createHash } from "node:crypto";
import { type DiagnosedApi, diagnosticsAsked, isDiagnosedApi } from "../providers/cache-diagnosis.js";
import type { Transport, WireApi } from "../providers/types.js";
import { asArray, asObject } from "../providers/wire-json.js";
import { decodeBody } from "./body-encoding.js";
import type { HandedRequest, HandedResponse } from "./handed-exchange.js";
import { insertMember } from "./json-insert.js";
import type { AddedDiagnostics } from "./types.js";

/** A request as it goes upstream: its lineage, and the new body and what it added (when anything was). */
export interface ChainedRequest {
  lineage: string;
  api: DiagnosedApi;
  amended?: { bytes: Buffer; added: AddedDiagnostics };
  /** Why the body went upstream as the agent sent it though the proxy would have added its field. */
  leftAsSent?: string;
}

/** How far into a response its id is looked for: the id leads both APIs' bodies and first events. */
const ID_WINDOW = 64 * 1024;

const ID_PATTERN: Record<DiagnosedApi, RegExp> = {
  "anthropic-messages": /"id"\s*:\s*"(msg_[^"]*)"/,
  "openai-responses": /"id"\s*:\s*"(resp_[^"]*)"/,
};

export class DiagnosticsChain {
  /** The latest response id of each lineage. */
  private readonly latest = new Map<string, string>();

  /**
   * A request to chain, or null when it is none of ours to touch: another API, a compressed body,
   * one that is not a JSON object (the capture stores it as an unreadable side payload). A request
   * whose agent asks for diagnostics itself is chained but left as sent.
   */
  chain(api: WireApi | null, bytes: Buffer, contentEncoding: string | undefined): ChainedRequest | null {
    if (!isDiagnosedApi(api) || contentEncoding !== undefined) return null;
    let json: unknown;
    try {
      json = JSON.parse(bytes.toString("utf8"));
    } catch {
      return null;
    }
    if (json === null || typeof json !== "object" || Array.isArray(json)) return null;
    const lineage = lineageOf(api, json as Record<string, unknown>);
    if (diagnosticsAsked(api, json)) return { lineage, api };
    return { lineage, api, ...amend(api, bytes, this.latest.get(lineage) ?? null) };
  }

  /** Learns the response id a chained request got, so the next request of its lineage compares with it. */
  async answered(
    request: ChainedRequest,
    response: Pick<HandedResponse, "status" | "bytes" | "contentEncoding">,
  ): Promise<void> {
    if (response.status === null || response.status < 200 || response.status > 299) return;
    // Only the window is decoded: a compressed reply that inflates to gigabytes costs this thread nothing more.
    const decoded = await decodeBody(response.bytes, response.contentEncoding, { cutShort: true, limit: ID_WINDOW });
    const head = decoded.text.slice(0, ID_WINDOW);
    const id = ID_PATTERN[request.api].exec(head)?.[1];
    if (id) this.latest.set(request.lineage, id);
  }
}

/**
 * Relays a request through `send`, chained when the proxy asks for diagnostics (`chain` not null): the
 * amended body goes upstream (`send` gives it its own content-length) and the response's id is learnt;
 * returns what the capture is told was added, or why the body went as sent.
 */
export async function relayChained(
  chain: DiagnosticsChain | null,
  { api, bytes, contentEncoding }: { api: WireApi | null; bytes: Buffer; contentEncoding?: string },
  send: (bytes: Buffer) => Promise<HandedResponse>,
): Promise<{ relayed: HandedResponse; added?: Pick<HandedRequest, "diagnosticsAdded" | "diagnosticsLeft"> }> {
  const chained = chain?.chain(api, bytes, contentEncoding) ?? null;
  if (!chained) return { relayed: await send(bytes) };
  const relayed = await send(chained.amended?.bytes ?? bytes);
  await chain!.answered(chained, relayed);
  if (chained.leftAsSent) return { relayed, added: { diagnosticsLeft: chained.leftAsSent } };
  return { relayed, ...(chained.amended && { added: { diagnosticsAdded: chained.amended.added } }) };
}

/**
 * The runtime's requests chained as the proxy chains an agent's (a probe's `model.cacheDiagnostics`):
 * here the fields are the runtime's own, so a capture wrapped inside records them as sent.
 */
export function chainTransport(transport: Transport): Transport {
  const chain = new DiagnosticsChain();
  return async (request) => {
    const chained = chain.chain(request.api, Buffer.from(request.body), undefined);
    const body = chained?.amended?.bytes.toString("utf8") ?? request.body;
    const stream = await transport({ ...request, body });
    if (!chained) return stream;
    return (async function* () {
      const chunks: string[] = [];
      for await (const chunk of stream) {
        chunks.push(chunk);
        yield chunk;
      }
      await chain.answered(chained, { status: 200, bytes: Buffer.from(chunks.join("")) });
    })();
  };
}

/** The API, the model and a hash of the first message (past system texts): what stays the same through one conversation. */
function lineageOf(api: DiagnosedApi, json: Record<string, unknown>): string {
  const first = api === "anthropic-messages" ? asArray(json.messages)[0] : firstInput(json.input);
  // A breakpoint marker moves off the first message as the conversation grows; the lineage stays.
  const text = JSON.stringify(first ?? null, (key, value) => (key === "cache_control" ? undefined : value));
  const hash = createHash("sha256").update(text).digest("hex");
  return `${api} ${String(json.model)} ${hash}`;
}

/**
 * The first input item past the system and developer texts: those change with the tools an agent
 * activates (a miss worth diagnosing), the first user turn does not.
 */
const firstInput = (input: unknown) =>
  typeof input === "string"
    ? input
    : asArray(input).find((item) => !["system", "developer"].includes(String(asObject(item).role)));

/**
 * The body with the request field added as text (json-insert.ts), so the agent's bytes are otherwise
 * sent as they were; an existing `prompt_cache_options` object gets the id added inside it. A body
 * that cannot take the field without a change to what the agent wrote is left as sent, with the
 * reason. Responses has no first-turn opt-in, so a Responses request with nothing to compare with
 * is sent as it is.
 */
function amend(
  api: DiagnosedApi,
  bytes: Buffer,
  previous: string | null,
): Pick<ChainedRequest, "amended" | "leftAsSent"> {
  if (api === "openai-responses" && previous === null) return {};
  const text = bytes.toString("utf8");
  const [field, inserted] =
    api === "anthropic-messages"
      ? ["diagnostics.previous_message_id", insertMember(text, "diagnostics", { previous_message_id: previous })]
      : [
          "prompt_cache_options.comparison_response_id",
          insertMember(text, "comparison_response_id", previous, "prompt_cache_options"),
        ];
  if ("leftAsSent" in inserted) return { leftAsSent: `${field} was not added: ${inserted.leftAsSent}` };
  return { amended: { bytes: Buffer.from(inserted.text), added: { fields: [field], compareWith: previous } } };
}
