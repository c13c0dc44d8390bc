/**
 * Token facts remembered across runs, so a run whose texts were all counted before never loads
 * the tokenizer (about half a second and 50 MB for o200k_base).
 *
 * Every token figure of a record is derived from two facts (see `measureTokens` in tokens.ts):
 * the token count of a text, and how many leading tokens two framed segments share. Both depend
 * on nothing but the texts and the tokenizer's tables, so the file is keyed by the sha256 of the
 * texts, and named after the encoding and the gpt-tokenizer version: another version starts a
 * file of its own. A fact the file lacks is asked of the tokenizer, loaded then, and appended.
 *
 * The file is `<XDG_CACHE_HOME or ~/.cache>/payload-probe/tokens-<encoding>-gpt-tokenizer-<version>.jsonl`,
 * rows `{"k": key, "n": count}`; `PAYLOAD_PROBE_TOKEN_CACHE` names another file, or `off` turns it off.
 * Runs at once append whole rows (one O_APPEND write each), so they never corrupt it; a row that is
 * not whole or not a fact is ignored. Past `MAX_BYTES` the file is started afresh.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, statSync, unlinkSync } from "node:fs";
import { dirname, join } from "node:path";
import { appendJsonl } from "../jsonl.js";
import { userCacheDir } from "../user-cache.js";
import {
  loadTokenCounter,
  measureTokens,
  TOKEN_ENCODING,
  type TokenFacts,
  type TokenMeasure,
  tokenizerVersion,
} from "./tokens.js";
import type { CacheSegment } from "./types.js";

export const TOKEN_CACHE_ENV = "PAYLOAD_PROBE_TOKEN_CACHE";

/** About 50,000 facts; reading that many takes a few tens of milliseconds. */
const MAX_BYTES = 4 * 1024 * 1024;

/** The cache file for this machine, or null when `PAYLOAD_PROBE_TOKEN_CACHE=off`. */
export function defaultTokenCachePath(env: NodeJS.ProcessEnv = process.env): string | null {
  const chosen = env[TOKEN_CACHE_ENV];
  if (chosen === "off") return null;
  if (chosen) return chosen;
  return join(userCacheDir(env), `tokens-${TOKEN_ENCODING}-gpt-tokenizer-${tokenizerVersion()}.jsonl`);
}

/**
 * A whole row as `appendJsonl` writes a fact (`JSON.stringify({k, n})`: keys are base64url with `t:`,
 * `s:` and `:`, so never quoted or escaped), on a line of its own. Matching the file at once is about
 * half the time of parsing each line as JSON (the file holds thousands of facts), and a torn or
 * foreign row simply does not match: the tokenizer answers for it instead.
 */
const FACT_ROW = /^\{"k":"([A-Za-z0-9_:-]+)","n":(\d+)\}$/gm;

/** Thrown by the file-only facts when the file does not know the answer. */
class UnknownFact extends Error {}

const hash = (text: string) => createHash("sha256").update(text).digest("base64url");
/** A framed segment is its kind and its text; the reply opener has neither. */
const segmentKey = (segment: CacheSegment | null) =>
  segment === null ? "opener" : hash(`${segment.kind}\n${segment.text}`);

export class TokenCountCache {
  private readonly known = new Map<string, number>();

  constructor(readonly path: string | null) {
    if (path === null || !existsSync(path)) return;
    if (statSync(path).size > MAX_BYTES) {
      unlinkSync(path);
      return;
    }
    for (const [, key, n] of readFileSync(path, "utf8").matchAll(FACT_ROW)) this.known.set(key!, Number(n));
  }

  /**
   * Runs `use` with token figures from the file; when the file lacks a fact, runs it again with the
   * tokenizer, whose new facts are appended to the file. `use` must be free of side effects that a
   * second call would repeat.
   */
  async measure<T>(use: (measure: TokenMeasure) => T): Promise<T> {
    try {
      return use(measureTokens(this.facts((key) => this.known.get(key))));
    } catch (error) {
      if (!(error instanceof UnknownFact)) throw error;
    }
    const counter = await loadTokenCounter();
    return use(
      measureTokens(
        this.facts((key, compute) => {
          const known = this.known.get(key);
          if (known !== undefined) return known;
          const n = compute(counter);
          this.remember(key, n);
          return n;
        }),
      ),
    );
  }

  private facts(answer: (key: string, compute: (counter: TokenFacts) => number) => number | undefined): TokenFacts {
    const ask = (key: string, compute: (counter: TokenFacts) => number): number => {
      const n = answer(key, compute);
      if (n === undefined) throw new UnknownFact(key);
      return n;
    };
    return {
      countText: (text) => ask(`t:${hash(text)}`, (counter) => counter.countText(text)),
      sharedFramedTokens: (a, b) =>
        ask(`s:${segmentKey(a)}:${segmentKey(b)}`, (counter) => counter.sharedFramedTokens(a, b)),
    };
  }

  private remember(key: string, n: number): void {
    this.known.set(key, n);
    if (this.path === null) return;
    mkdirSync(dirname(this.path), { recursive: true });
    appendJsonl(this.path, { k: key, n });
  }
}
