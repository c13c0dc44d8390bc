/**
 * A message's inline images and documents (providers/media-parts.ts), worked out once per distinct
 * message and model: every request of a session sends its earlier screenshots again.
 */
import { type MessageMedia, mayHoldMedia, messageMedia } from "../providers/media-parts.js";
import { TextMemo } from "./text-memo.js";

/** Characters of messages with media kept per model; past that the memo starts afresh. */
const MEDIA_MAX_CHARS = 64 * 1024 * 1024;

const byModel = new Map<string, TextMemo<MessageMedia | null>>();

export function mediaOf(json: string, model: string): MessageMedia | undefined {
  if (!mayHoldMedia(json)) return undefined;
  let memo = byModel.get(model);
  if (!memo) {
    memo = new TextMemo(MEDIA_MAX_CHARS);
    byModel.set(model, memo);
  }
  return memo.get(json, (text) => messageMedia(text, model) ?? null) ?? undefined;
}
