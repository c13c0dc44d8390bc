/**
 * Which top-level arrays of each wire API's body hold its segments (tool definitions, system parts,
 * messages), and what one element of them is: the codec's dissection of that element given as a
 * body of its own.
 *
 * A body's segments, as its codec's dissection of the whole body lists them, are those of the fields
 * around its arrays (a `system` or `instructions` string, Gemini's `systemInstruction`, Converse's
 * `toolConfig`), then each array's elements' in the body's array order below: every codec reads an
 * element of these arrays without looking at its neighbours. So a reader that works per segment can
 * take apart each distinct element of a run once (body-elements.ts keys them by content).
 */
import { codecFor } from "../providers/codecs.js";
import type { WireApi, WireDissection } from "../providers/types.js";
import { type BodyElements, bodyOfElements } from "./body-elements.js";

/** A body's segments, as a dissection lists them. */
export type Segments = Pick<WireDissection, "tools" | "systemParts" | "messages">;

/**
 * Per API, the arrays whose elements are segments, in the order their segments follow each other
 * within each kind (Responses: the `tools` array's tools, then those an `additional_tools` input item
 * carries; its system parts: `instructions`, then system and developer input items).
 */
const SEGMENT_ARRAYS: Record<WireApi, readonly string[]> = {
  "anthropic-messages": ["tools", "system", "messages"],
  "openai-completions": ["tools", "messages"],
  "openai-responses": ["tools", "input"],
  "google-generative-ai": ["tools", "contents"],
  "bedrock-converse": ["system", "messages"],
};

/**
 * A Gemini body may wrap its request (Code Assist's `request`, countTokens' `generateContentRequest`),
 * and the codec then reads the wrapped one and no top-level array: such a body is taken whole.
 */
function wrapsItsRequest(api: WireApi, elements: BodyElements): boolean {
  if (api !== "google-generative-ai") return false;
  const { keys } = elements;
  return (
    keys.includes("generateContentRequest") ||
    (!keys.includes("contents") && (keys.includes("request") || keys.includes("response")))
  );
}

/** The arrays of `elements` that hold segments, in order; null for a body whose segments are read otherwise. */
export function segmentArrays(api: WireApi, elements: BodyElements): readonly string[] | null {
  return wrapsItsRequest(api, elements) ? null : SEGMENT_ARRAYS[api];
}

/** One element of the array `name` taken apart alone. */
export function elementSegments(api: WireApi, name: string, text: string): WireDissection {
  return codecFor(api).dissect(bodyOfElements(name, [text]));
}

/** The segments of the fields around the body's arrays (the arrays' elements left out). */
export function aroundSegments(api: WireApi, elements: BodyElements): WireDissection {
  return codecFor(api).dissect(JSON.stringify(elements.top));
}
