import { UserError } from "../errors.js";
import { anthropicMessages } from "./anthropic-messages.js";
import { bedrockConverse } from "./bedrock-converse.js";
import { googleGenerativeAi } from "./google-generative-ai.js";
import { openaiCompletions } from "./openai-completions.js";
import { openaiResponses } from "./openai-responses.js";
import { type Codec, WIRE_APIS, type WireApi } from "./types.js";

/** The one place a wire API is mapped to its codec: the runner, capture and analysis all ask here. */
const CODECS: Record<WireApi, Codec> = {
  "openai-completions": openaiCompletions,
  "anthropic-messages": anthropicMessages,
  "openai-responses": openaiResponses,
  "google-generative-ai": googleGenerativeAi,
  "bedrock-converse": bedrockConverse,
};

/** The codec of a wire API; an api no codec reads (from a file written elsewhere) is bad input. */
export function codecFor(api: WireApi): Codec {
  const codec = CODECS[api];
  if (!codec) throw new UserError(`no codec for wire API "${api}": known APIs are ${WIRE_APIS.join(", ")}`);
  return codec;
}
