/**
 * What a view page is made with besides the run's records: a token figure for every segment it shows,
 * the size of the run files (the page says how much it shrank them), and the model's replies. The saved page (cli/view.ts)
 * and the live view (live-view.ts) both take them from here.
 */
import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { runFiles } from "../../capture/run-format.js";
import { defaultTokenCachePath, TokenCountCache } from "../../capture/token-count-cache.js";
import type { TokenMeasure } from "../../capture/tokens.js";
import type { RequestRecord } from "../../capture/types.js";
import { codecFor } from "../../providers/codecs.js";
import type { WireApi } from "../../providers/types.js";
import { type BodyElements, bodyElements } from "../body-elements.js";
import { aroundSegments, elementSegments, segmentArrays } from "../element-segments.js";
import type { ResponsePayload, RunSource } from "../load-run.js";
import { replyBodyLines, usageTable } from "../show/show-render.js";
import { replyOf } from "../show/show-reply.js";
import type { ViewReply } from "./types.js";

/**
 * Token figures for every segment the page shows, from the token cache when it knows them all (a run
 * captured on this machine), so the tokenizer (half a second) loads only for texts never counted.
 * The pass asks for each segment of each request, as the page will; the measure it returns then
 * knows every one. A caller that measures again and again (the live view) passes its own cache, read
 * from the file once.
 */
export async function segmentMeasure(
  sources: RunSource[],
  cache = new TokenCountCache(defaultTokenCachePath()),
): Promise<TokenMeasure> {
  return cache.measure((measure) => {
    // Each distinct part of a body once: the page counts each of its segments once too.
    const seen = new Map<string, Set<string>>();
    for (const source of sources) {
      if (!source.hasPayloads) continue;
      for (const payload of source.lazyPayloads()) {
        const { api, body } = payload.stored();
        if (api === null) continue;
        const elements = bodyElements(body);
        const arrays = elements && segmentArrays(api, elements);
        if (arrays) countElements(measure, api, elements!, arrays, seen);
        else measure.countRequestTokens(codecFor(api).dissect(payload.load().body));
      }
    }
    return measure;
  });
}

/** Every segment of a body's parts not counted yet, each part taken apart alone, and the fields around them. */
function countElements(
  measure: TokenMeasure,
  api: WireApi,
  elements: BodyElements,
  arrays: readonly string[],
  seen: Map<string, Set<string>>,
): void {
  measure.countRequestTokens(aroundSegments(api, elements));
  for (const name of arrays) {
    // The keys counted so far, one set per API and array: a key names content, whichever array sends it.
    const table = `${api} ${name}`;
    const counted = seen.get(table) ?? new Set<string>();
    seen.set(table, counted);
    for (const element of elements.arrays.get(name) ?? []) {
      if (counted.has(element.key)) continue;
      counted.add(element.key);
      const d = elementSegments(api, name, element.text());
      measure.countRequestTokens(d);
      // The page counts a tool's definition whether or not a message loads it; taken apart alone, a
      // deferred tool is one no message loads, which the request's count left out.
      for (const tool of d.tools) if (tool.deferred) measure.segmentTokens({ kind: "tools", text: tool.json });
    }
  }
}

/** Bytes of requests.jsonl and payloads.jsonl of a run read from a folder; 0 for one read from the database. */
export function runFileBytes(source: RunSource): number {
  if (!source.recordsFile) return 0;
  const files = runFiles(resolve(source.recordsFile, ".."));
  return [files.requests, files.payloads].filter((f) => existsSync(f)).reduce((n, f) => n + statSync(f).size, 0);
}

/**
 * Each run's replies by seq, as `show` prints them with the usage as a table: the responses read once,
 * in the order stored, each parsed by its request's codec. A request without a stored response gets
 * the reply `show` gives it (how it came, the usage its record holds).
 */
export async function viewReplies(sources: RunSource[]): Promise<Map<number, ViewReply>[]> {
  const maps: Map<number, ViewReply>[] = [];
  for (const source of sources) {
    const records = new Map([...source.records()].map((r) => [r.seq, r]));
    const replies = new Map<number, ViewReply>();
    const add = async (record: RequestRecord, response: ResponsePayload | null) => {
      const reply = await replyOf(record, response);
      replies.set(record.seq, { lines: replyBodyLines(reply), usage: usageTable(reply) });
    };
    for (const response of source.responses?.() ?? []) {
      const record = records.get(response.seq);
      if (record) await add(record, response);
    }
    for (const record of records.values()) if (!replies.has(record.seq)) await add(record, null);
    maps.push(replies);
  }
  return maps;
}
