/**
 * Anthropic's Messages API as the clouds serve it: the body is a Messages body without `model` (with
 * `anthropic_version` instead), and the model is in the path.
 * - Amazon Bedrock: `POST /model/{modelId}/invoke` and `/model/{modelId}/invoke-with-response-stream`
 *   (the model id percent-encoded: `us.anthropic.claude-sonnet-4-5-20250929-v1%3A0`).
 * - Google Vertex AI: `POST /v1/projects/{p}/locations/{l}/publishers/anthropic/models/{model}:rawPredict`
 *   and `:streamRawPredict`.
 */

const BEDROCK_INVOKE = /\/model\/([^/]+)\/(invoke|invoke-with-response-stream)$/;
/** Bedrock's own Converse API (`providers/bedrock-converse.ts`): `POST /model/{modelId}/converse` and `/converse-stream`. */
const BEDROCK_CONVERSE = /\/model\/([^/]+)\/(converse|converse-stream)$/;
const VERTEX_ANTHROPIC = /\/publishers\/anthropic\/models\/([^/:]+):(rawPredict|streamRawPredict)$/;

/** Which cloud serves a Messages path, and the model it names; null for any other path. */
export function cloudMessagesEndpoint(path: string): { cloud: "bedrock" | "vertex"; model: string } | null {
  const pathname = path.replace(/[?#].*$/s, "");
  const bedrock = BEDROCK_INVOKE.exec(pathname);
  if (bedrock) return { cloud: "bedrock", model: safeDecode(bedrock[1]!) };
  const vertex = VERTEX_ANTHROPIC.exec(pathname);
  if (vertex) return { cloud: "vertex", model: safeDecode(vertex[1]!) };
  return null;
}

/**
 * A Converse path's model (an id, an inference profile's `us.…` id or an ARN, percent-decoded) and
 * whether it asks for the stream; null for any other path.
 */
export function bedrockConverseEndpoint(path: string): { model: string; stream: boolean } | null {
  const converse = BEDROCK_CONVERSE.exec(path.replace(/[?#].*$/s, ""));
  return converse ? { model: safeDecode(converse[1]!), stream: converse[2] === "converse-stream" } : null;
}

/** A path or segment percent-decoded; as it is when it holds a stray `%`. */
export function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
