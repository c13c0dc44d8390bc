/**
 * What a view page is made with besides the run's records: a token figure for every segment it shows,
 * and the size of the run files (the page says how much it shrank them). The saved page (cli/view.ts)
 * and the live view (live-view.ts) both take them from here.
 */
import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { runFiles } from "../../capture/run-format.js";
import { defaultTokenCachePath, TokenCountCache } from "../../capture/token-count-cache.js";
import type { TokenMeasure } from "../../capture/tokens.js";
import { codecFor } from "../../providers/codecs.js";
import type { RunSource } from "../load-run.js";

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
    for (const source of sources) {
      if (!source.hasPayloads) continue;
      for (const payload of source.payloads())
        if (payload.api !== null) measure.countRequestTokens(codecFor(payload.api).dissect(payload.body));
    }
    return measure;
  });
}

/** Bytes of requests.jsonl and payloads.jsonl of a run read from a folder; 0 for one read from the database. */
export function runFileBytes(source: RunSource): number {
  if (!source.recordsFile) return 0;
  const files = runFiles(resolve(source.recordsFile, ".."));
  return [files.requests, files.payloads].filter((f) => existsSync(f)).reduce((n, f) => n + statSync(f).size, 0);
}
