import type { ResponseStream } from "./types.js";

/** Yields the payload of every `data:` line of an SSE stream, however the text was chunked. */
export async function* sseData(stream: ResponseStream): AsyncGenerator<string> {
  let buffered = "";
  for await (const chunk of stream) {
    buffered += chunk;
    for (let newline = buffered.indexOf("\n"); newline >= 0; newline = buffered.indexOf("\n")) {
      const line = buffered.slice(0, newline).replace(/\r$/, "");
      buffered = buffered.slice(newline + 1);
      if (line.startsWith("data:")) yield line.slice(5).trimStart();
    }
  }
  const last = buffered.trim();
  if (last.startsWith("data:")) yield last.slice(5).trimStart();
}

export function sseEvent(payload: unknown): string {
  return `data: ${typeof payload === "string" ? payload : JSON.stringify(payload)}\n\n`;
}
