/**
 * Token facts remembered across runs, so a run whose texts were all counted before never loads
 * the tokenizer (about half a second and 50 MB for o200k_base).
 *
 * Every token figure of a record is derived from two facts (see `measureTokens` in tokens.ts):
 * the token count of a text, and how many leading tokens two framed segments share. Both depend
 * on nothing but the texts and the tokenizer's tables, so facts are keyed by the sha256 of the
 * texts, in a folder named after the encoding and the gpt-tokenizer version: another version starts
 * a folder of its own. A fact the folder lacks is asked of the tokenizer, loaded then, and appended.
 *
 * The folder is `<XDG_CACHE_HOME or ~/.cache>/payload-probe/tokens-<encoding>-gpt-tokenizer-<version>/`;
 * `PAYLOAD_PROBE_TOKEN_CACHE` names another folder, or `off` turns it off. Facts are spread over 64
 * files by the first character of their key's hash, `<c>.jsonl` with rows `{"k": key, "n": count}`,
 * and a file is read only when a fact is looked up in it: a run reads what its own texts need, not
 * every fact the machine ever counted (one file of all facts cost p1 30–40 ms at every start, and
 * grew with use). Runs at once append whole rows (one O_APPEND write each), so they never corrupt a
 * file; a row that is not whole or not a fact is ignored. Past `MAX_SHARD_BYTES` a file is started
 * afresh.
 */
import { hash as digest } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, statSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { appendJsonl } from "../files/jsonl.js";
import { userCacheDir } from "../files/user-cache.js";
import { TextMemo } from "./text-memo.js";
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

/** About 800 facts a file, 50,000 in all: one file is read in well under a millisecond. */
const MAX_SHARD_BYTES = 64 * 1024;

/** The cache folder for this machine, or null when `PAYLOAD_PROBE_TOKEN_CACHE=off`. */
export function defaultTokenCachePath(env: NodeJS.ProcessEnv = process.env): string | null {
  const chosen = env[TOKEN_CACHE_ENV];
  if (chosen === "off") return null;
  if (chosen) return chosen;
  return join(userCacheDir(env), `tokens-${TOKEN_ENCODING}-gpt-tokenizer-${tokenizerVersion()}`);
}

/**
 * What follows `{"k":"<key>","n":` in a whole row as `appendJsonl` writes a fact
 * (`JSON.stringify({k, n})`: keys are base64url with `t:`, `s:` and `:`, so never quoted or escaped).
 * A torn or foreign row does not match: the tokenizer answers for it instead.
 */
const COUNT_TAIL = /^(\d+)\}$/;

/**
 * The count a file's text holds for `key`, the last whole row winning, or undefined. The text is
 * searched for the key rather than parsed into a table: a run looks up a few dozen facts, and a file
 * holds hundreds (building the table cost p1 more than all its lookups).
 */
function countIn(text: string, key: string): number | undefined {
  const head = `{"k":"${key}","n":`;
  for (let at = text.lastIndexOf(head); at >= 0; at = at === 0 ? -1 : text.lastIndexOf(head, at - 1)) {
    if (at > 0 && text[at - 1] !== "\n") continue;
    const end = text.indexOf("\n", at);
    const tail = COUNT_TAIL.exec(text.slice(at + head.length, end < 0 ? text.length : end));
    if (tail) return Number(tail[1]);
  }
  return undefined;
}

/** Thrown by the cache-only facts when the cache does not know the answer. */
class UnknownFact extends Error {}

// The one-shot digest: about half the time of a Hash object per text (Node 20.12 and later).
const hash = (text: string) => digest("sha256", text, "base64url");

/**
 * Texts whose count this process already knows, up to this many characters: a request repeats its
 * predecessor's tools, system parts and messages, and hashing each of them again to look up its fact
 * cost more than the lookups.
 */
const MEMO_MAX_CHARS = 16 * 1024 * 1024;
/** A framed segment is its kind and its text; the reply opener has neither. */
const segmentKey = (segment: CacheSegment | null) =>
  segment === null ? "opener" : hash(`${segment.kind}\n${segment.text}`);
/**
 * The file a key's fact is kept in: the first character of its (first) hash, after the `t:` or `s:`
 * kind, one of base64url's 64 (or the "o" of the opener), so always one safe file name.
 */
const shardOf = (key: string) => `${key[2]}.jsonl`;

/** A file's text; a file past the size limit is started afresh. */
function readShard(file: string): string {
  if (!existsSync(file)) return "";
  if (statSync(file).size > MAX_SHARD_BYTES) {
    unlinkSync(file);
    return "";
  }
  return readFileSync(file, "latin1");
}

export class TokenCountCache {
  /** Facts counted by this process. */
  private readonly known = new Map<string, number>();
  private readonly countsByText = new TextMemo(MEMO_MAX_CHARS);
  /** The text of each file read so far ("" for one missing or started afresh). */
  private readonly shards = new Map<string, string>();

  constructor(readonly path: string | null) {}

  /** The fact under `key`: counted here, else from its file, read the first time it is asked for. */
  private lookUp(key: string): number | undefined {
    const known = this.known.get(key);
    if (known !== undefined || this.path === null) return known;
    const shard = shardOf(key);
    let text = this.shards.get(shard);
    if (text === undefined) {
      text = readShard(join(this.path, shard));
      this.shards.set(shard, text);
    }
    return countIn(text, key);
  }

  /**
   * Runs `use` with token figures from the cache; when it lacks a fact, runs it again with the
   * tokenizer, whose new facts are appended to the cache. `use` must be free of side effects that a
   * second call would repeat.
   */
  async measure<T>(use: (measure: TokenMeasure) => T): Promise<T> {
    try {
      return use(measureTokens(this.facts((key) => this.lookUp(key))));
    } catch (error) {
      if (!(error instanceof UnknownFact)) throw error;
    }
    const counter = await loadTokenCounter();
    return use(
      measureTokens(
        this.facts((key, compute) => {
          const known = this.lookUp(key);
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
      countText: (text) =>
        this.countsByText.get(text, () => ask(`t:${hash(text)}`, (counter) => counter.countText(text))),
      sharedFramedTokens: (a, b) =>
        ask(`s:${segmentKey(a)}:${segmentKey(b)}`, (counter) => counter.sharedFramedTokens(a, b)),
    };
  }

  private remember(key: string, n: number): void {
    this.known.set(key, n);
    if (this.path === null) return;
    mkdirSync(this.path, { recursive: true });
    appendJsonl(join(this.path, shardOf(key)), { k: key, n });
  }
}
