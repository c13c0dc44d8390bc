import { eventPayloads, readResponse, sseEvent } from "./response-body.js";
import type {
  AssistantMessage,
  Codec,
  Context,
  Message,
  ModelResponse,
  ModelSpec,
  RenderedReply,
  ResponseStream,
  ScriptedReply,
  ToolCall,
  Usage,
  WireDissection,
  WireRequest,
} from "./types.js";
import { argumentsObject, asArray, asObject, count } from "./wire-json.js";

/**
 * Google's Gemini API (generativelanguage.googleapis.com, REST reference "models.generateContent"
 * and "models.streamGenerateContent"). Unlike the other three APIs the model and the wish to stream
 * travel in the URL, not the body: `POST /v1beta/models/{model}:generateContent` answers one JSON
 * object, `:streamGenerateContent?alt=sse` an SSE stream of such objects, and `:streamGenerateContent`
 * without `alt=sse` one JSON array of them sent piece by piece. The body carries `contents` (roles
 * `user` and `model`, each a list of parts), `systemInstruction`, `tools`, `generationConfig`.
 */

type Part = Record<string, unknown>;
interface Content {
  role: "user" | "model";
  parts: Part[];
}

/** The generate methods a Gemini path may name, and countTokens, which the mock answers too. */
export type GeminiMethod = "generateContent" | "streamGenerateContent" | "countTokens";

/** What a Gemini request URL says: the model, the method, and for a stream whether it is SSE. */
export interface GeminiEndpoint {
  /** The API version segment (`v1beta`, `v1`). */
  version: string;
  model: string;
  method: GeminiMethod;
  /** `streamGenerateContent?alt=sse`: an SSE stream; without it a stream is one JSON array. */
  sse: boolean;
}

/**
 * `/{version}/models/{model}:{method}`, a tuned model (`tunedModels/…`) too, under any prefix a proxy
 * adds; Vertex AI's `/{version}/projects/{p}/locations/{l}/publishers/google/models/{model}:{method}`
 * takes the same bodies and answers the same way.
 */
const ENDPOINT =
  /\/(v1[a-z0-9]*)\/(?:projects\/[^/]+\/locations\/[^/]+\/publishers\/google\/)?(?:models|tunedModels)\/([^/:]+):(generateContent|streamGenerateContent|countTokens)$/;
/**
 * The Code Assist API a Gemini CLI signed in with Google talks to (`CODE_ASSIST_ENDPOINT`, default
 * https://cloudcode-pa.googleapis.com; packages/core code_assist/server.ts and converter.ts of the CLI
 * 0.61.0): `POST /v1internal:{method}`. Its generate bodies wrap a Gemini request, `{model, project,
 * user_prompt_id, request: {contents, systemInstruction, tools, generationConfig, …}}`, and its replies
 * wrap a Gemini response, `{response: {candidates, usageMetadata, …}, traceId}`; the model is in the body.
 */
const CODE_ASSIST_ENDPOINT = /\/(v1internal):(generateContent|streamGenerateContent|countTokens)$/;

/** The endpoint a URL or path names, or null when it is no Gemini model method. */
export function geminiEndpoint(url: string): GeminiEndpoint | null {
  const parsed = new URL(url, "http://gemini");
  const sse = parsed.searchParams.get("alt") === "sse";
  const wrapped = CODE_ASSIST_ENDPOINT.exec(parsed.pathname);
  if (wrapped) return { version: wrapped[1]!, model: "", method: wrapped[2] as GeminiMethod, sse };
  const match = ENDPOINT.exec(parsed.pathname);
  if (!match) return null;
  const [, version, model, method] = match as unknown as [string, string, string, GeminiMethod];
  return { version, model: decodeURIComponent(model), method, sse };
}

/** How the answer to a request at this URL travels: SSE, a JSON array of chunks, or one JSON object. */
export function geminiReplyForm(url: string): "sse" | "array" | "json" {
  const endpoint = geminiEndpoint(url);
  if (endpoint?.method !== "streamGenerateContent") return "json";
  return endpoint.sse ? "sse" : "array";
}

function modelParts(message: AssistantMessage): Part[] {
  return [
    ...(message.text.trim() === "" ? [] : [{ text: message.text }]),
    ...message.toolCalls.map((call) => ({
      functionCall: { id: call.id, name: call.name, args: argumentsObject(call.arguments) },
    })),
  ];
}

/**
 * Tool results answer as `functionResponse` parts of a user turn; consecutive results share one
 * turn, as a model turn's parallel calls are answered together ("Function calling", parallel calls).
 */
function wireContents(messages: Message[]): Content[] {
  const wire: Content[] = [];
  for (const message of messages) {
    if (message.role === "user") wire.push({ role: "user", parts: [{ text: message.content }] });
    else if (message.role === "assistant") {
      const parts = modelParts(message);
      if (parts.length > 0) wire.push({ role: "model", parts });
    } else {
      const output = message.isError ? { error: message.content } : { output: message.content };
      const part = { functionResponse: { id: message.toolCallId, name: message.toolName, response: output } };
      const last = wire.at(-1);
      if (last?.role === "user" && last.parts.every((p) => p.functionResponse !== undefined)) last.parts.push(part);
      else wire.push({ role: "user", parts: [part] });
    }
  }
  return wire;
}

/** Body key order `contents, systemInstruction, tools, generationConfig`; every turn streams over SSE. */
function buildRequest(model: ModelSpec, context: Context, kind: WireRequest["kind"]): WireRequest {
  const body: Record<string, unknown> = { contents: wireContents(context.messages) };
  const system = [context.systemPrompt, ...(context.environment === undefined ? [] : [context.environment])];
  const systemParts = system.filter((text) => text !== "").map((text) => ({ text }));
  if (systemParts.length > 0) body.systemInstruction = { parts: systemParts };
  if (context.tools.length > 0) {
    const declarations = context.tools.map((tool) => ({
      name: tool.name,
      description: tool.description,
      parametersJsonSchema: tool.parameters,
    }));
    body.tools = [{ functionDeclarations: declarations }];
  }
  body.generationConfig = { maxOutputTokens: model.maxTokens };
  const url = `${model.baseUrl}/models/${model.id}:streamGenerateContent?alt=sse`;
  return { api: "google-generative-ai", url, body: JSON.stringify(body), kind };
}

/**
 * `usageMetadata` in our one vocabulary. `promptTokenCount` already includes the cached content
 * (`cachedContentTokenCount`); the tool-use prompt is billed as input and thoughts as output beside
 * it, since `totalTokenCount` is prompt + candidates + tool-use prompt + thoughts (UsageMetadata in
 * the REST reference and in @google/genai's types).
 */
function geminiUsage(raw: Record<string, unknown>): Usage {
  const prompt = count(raw.promptTokenCount);
  const toolUse = count(raw.toolUsePromptTokenCount);
  const candidates = count(raw.candidatesTokenCount);
  const thoughts = count(raw.thoughtsTokenCount);
  const anyInput = prompt !== undefined || toolUse !== undefined;
  const anyOutput = candidates !== undefined || thoughts !== undefined;
  return {
    source: "provider",
    inputTokens: anyInput ? (prompt ?? 0) + (toolUse ?? 0) : undefined,
    outputTokens: anyOutput ? (candidates ?? 0) + (thoughts ?? 0) : undefined,
    cachedInputTokens: count(raw.cachedContentTokenCount),
    raw,
  };
}

/** The first candidate's parts of each chunk, joined into one reply; the last chunk's usage counts (it is cumulative). */
/** What a Code Assist body or reply chunk wraps (`request`, `response`), or the object itself when it wraps nothing. */
export function codeAssistInner(object: Record<string, unknown>): Record<string, unknown> {
  if (object.contents !== undefined || object.candidates !== undefined) return object;
  const inner = object.request ?? object.response;
  return inner !== null && typeof inner === "object" && !Array.isArray(inner)
    ? (inner as Record<string, unknown>)
    : object;
}

function responseOf(chunks: Record<string, unknown>[]): ModelResponse {
  const message: AssistantMessage = { role: "assistant", text: "", toolCalls: [] };
  let usage: Record<string, unknown> | null = null;
  for (const sent of chunks) {
    const chunk = codeAssistInner(sent);
    if (chunk.usageMetadata !== undefined) usage = asObject(chunk.usageMetadata);
    const candidate = asObject(asArray(chunk.candidates)[0]);
    for (const part of asArray(asObject(candidate.content).parts).map(asObject)) {
      // A thought summary (`thought: true`) is not the answer.
      if (typeof part.text === "string" && part.thought !== true) message.text += part.text;
      const call = asObject(part.functionCall);
      if (part.functionCall === undefined) continue;
      // Gemini may send calls without ids; a position keeps each call's result matched to it.
      const id = typeof call.id === "string" ? call.id : `call_${message.toolCalls.length + 1}`;
      const toolCall: ToolCall = { id, name: String(call.name ?? ""), arguments: JSON.stringify(call.args ?? {}) };
      message.toolCalls.push(toolCall);
    }
  }
  return usage ? { message, usage: geminiUsage(usage) } : { message };
}

/**
 * The whole objects of a JSON-array stream, in order: each top-level `{…}` once its closing brace has
 * come, so a stream cut part-way still gives the chunks that arrived whole (as SSE does).
 */
function arrayElements(text: string): Record<string, unknown>[] {
  const elements: Record<string, unknown>[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{" && depth++ === 0) start = i;
    else if (c === "}" && --depth === 0) elements.push(asObject(JSON.parse(text.slice(start, i + 1))));
  }
  return elements;
}

/** The response's chunks: the elements of a JSON-array stream, the events of an SSE one, or the one object. */
async function parseStream(stream: ResponseStream): Promise<ModelResponse> {
  const chunks: string[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  const text = chunks.join("");
  if (text.trimStart().startsWith("[")) return responseOf(arrayElements(text));
  const body = await readResponse(
    (async function* () {
      yield text;
    })(),
  );
  return responseOf(body.form === "sse" ? eventPayloads(body.events) : [asObject(body.json)]);
}

function replyParts(reply: ScriptedReply): Part[][] {
  if (reply.kind === "tool_calls")
    return reply.calls.map((call) => [
      { functionCall: { id: call.id, name: call.name, args: argumentsObject(call.arguments) } },
    ]);
  // A text streams in pieces of a few words, as Gemini's stream does.
  const words = reply.text.split(/(?<= )/);
  const size = Math.max(1, Math.ceil(words.length / 3));
  const pieces = Array.from({ length: Math.ceil(words.length / size) }, (_, i) =>
    words.slice(i * size, (i + 1) * size).join(""),
  );
  return pieces.map((text) => [{ text }]);
}

/** One response object (a whole reply, or one chunk of a stream): the last one carries finishReason and usage. */
function responseObject(model: string, parts: Part[], last: { usage?: ScriptedReply["usage"] } | null) {
  const candidate = { content: { role: "model", parts }, ...(last && { finishReason: "STOP" }), index: 0 };
  const usage = last?.usage && {
    usageMetadata: {
      promptTokenCount: last.usage.inputTokens,
      candidatesTokenCount: last.usage.outputTokens,
      totalTokenCount: last.usage.inputTokens + last.usage.outputTokens,
    },
  };
  return { candidates: [candidate], ...usage, modelVersion: model, responseId: "probe-response" };
}

/** The model a request is for: its URL's, else (Code Assist) its body's; `scripted` when neither names one. */
function requestedModel(endpoint: GeminiEndpoint | null, requestBody: string): string {
  if (endpoint?.model) return endpoint.model;
  try {
    const model: unknown = (JSON.parse(requestBody) as { model?: unknown }).model;
    return typeof model === "string" && model !== "" ? model : "scripted";
  } catch {
    return "scripted";
  }
}

function renderReply(reply: ScriptedReply, requestBody: string, url = ""): RenderedReply {
  const endpoint = geminiEndpoint(url);
  const model = requestedModel(endpoint, requestBody);
  // Code Assist wraps each response object as `{response, traceId}` (the CLI's converter.ts).
  const shaped = (object: object) =>
    endpoint?.version === "v1internal" ? { response: object, traceId: "probe-trace" } : object;
  const pieces = replyParts(reply);
  const form = geminiReplyForm(url);
  if (form === "json")
    return { streamed: false, chunks: [JSON.stringify(shaped(responseObject(model, pieces.flat(), reply)))] };
  const objects = pieces.map((parts, i) =>
    shaped(responseObject(model, parts, i === pieces.length - 1 ? reply : null)),
  );
  if (form === "sse") return { streamed: true, chunks: objects.map((object) => sseEvent(object)) };
  // The array form as Google sends it: `[` before the first object, `,\r\n` between, `]` after the last.
  const chunks = objects.map((object, i) => `${i === 0 ? "[" : "\n,\r\n"}${JSON.stringify(object)}`);
  chunks[chunks.length - 1] += "\n]";
  return { streamed: true, chunks };
}

/** A part as text: its text, a call or a response in short, inline data as its type and size only. */
function partText(part: Part): string {
  if (typeof part.text === "string") return part.text;
  const call = asObject(part.functionCall);
  if (part.functionCall !== undefined) return `${String(call.name ?? "")} ${JSON.stringify(call.args ?? {})}`;
  const result = asObject(part.functionResponse);
  if (part.functionResponse !== undefined) return JSON.stringify(result.response ?? {});
  const inline = asObject(part.inlineData);
  if (part.inlineData !== undefined) {
    const size = Math.floor((String(inline.data ?? "").length * 3) / 4);
    return `[${String(inline.mimeType ?? "inline data")}, ${size} bytes]`;
  }
  return "";
}

/**
 * Roles in the vocabulary the other APIs' records use, so runs compare across APIs: `model` reads as
 * `assistant`, and a user turn of function responses only as `tool`; any other role stays as sent.
 */
function roleOf(role: unknown, parts: Part[]): string {
  if (role === "model") return "assistant";
  if (parts.length > 0 && parts.every((p) => p.functionResponse !== undefined)) return "tool";
  return typeof role === "string" ? role : "user";
}

/**
 * A tool entry holds `functionDeclarations` (each a tool of its own here) or one built-in tool
 * (`googleSearch`, `codeExecution`, `urlContext`, …), kept whole and named by its key.
 */
function dissectTools(tools: unknown[]): WireDissection["tools"] {
  return tools.flatMap((value) => {
    const tool = asObject(value);
    if (Array.isArray(tool.functionDeclarations))
      return tool.functionDeclarations.map((declaration) => ({
        name: String(asObject(declaration).name ?? ""),
        json: JSON.stringify(declaration),
      }));
    return [{ name: Object.keys(tool).join("+"), json: JSON.stringify(tool) }];
  });
}

/** `systemInstruction` is a Content (its parts' texts are the system parts); clients may send it as a string. */
function systemTexts(instruction: unknown): string[] {
  if (typeof instruction === "string") return [instruction];
  return asArray(asObject(instruction).parts).map((part) => partText(asObject(part)));
}

/** A generation config that shapes the answer by a schema (`responseJsonSchema` or the older `responseSchema`). */
function schemaAnswer(config: Record<string, unknown>): { schemaAnswer?: true } {
  return config.responseJsonSchema !== undefined || config.responseSchema !== undefined ? { schemaAnswer: true } : {};
}

/**
 * The model comes from the URL (`models/{model}:…`); a body without one (a stored payload read back
 * without its URL, a countTokens `generateContentRequest`) may name it as `model: "models/…"`.
 */
function dissect(body: string, url?: string): WireDissection {
  const parsed = JSON.parse(body) as Record<string, unknown>;
  const request =
    parsed.generateContentRequest === undefined ? codeAssistInner(parsed) : asObject(parsed.generateContentRequest);
  // A Code Assist body names its model beside the request it wraps.
  const model = typeof request.model === "string" ? request.model : parsed.model;
  const named = typeof model === "string" ? model.replace(/^(models|tunedModels)\//, "") : "";
  const systemParts = systemTexts(request.systemInstruction);
  const messages = asArray(request.contents).map((value) => {
    const content = asObject(value);
    const parts = asArray(content.parts).map(asObject);
    const text = parts
      .map(partText)
      .filter((t) => t !== "")
      .join("\n");
    return { role: roleOf(content.role, parts), json: JSON.stringify(content), text };
  });
  return {
    model: (url === undefined ? undefined : geminiEndpoint(url)?.model) || named,
    tools: dissectTools(asArray(request.tools)),
    toolsJson: request.tools === undefined ? null : JSON.stringify(request.tools),
    systemParts,
    messages,
    roles: [...systemParts.map(() => "system"), ...messages.map((m) => m.role)],
    cacheBreakpoints: [],
    ...(typeof request.cachedContent === "string" && { cachedContent: request.cachedContent }),
    ...(request.generationConfig !== undefined && { settingsJson: JSON.stringify(request.generationConfig) }),
    ...schemaAnswer(asObject(request.generationConfig)),
  };
}

export const googleGenerativeAi: Codec = {
  api: "google-generative-ai",
  buildRequest,
  parseStream,
  renderReply,
  dissect,
};
