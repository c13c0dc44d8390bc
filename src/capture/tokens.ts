/**
 * Offline token estimate of a request with the `o200k_base` encoding (provider usage is kept apart).
 *
 * What is counted: the request's segments in cache order (see prefix.ts) — each tool definition's
 * JSON text, each system part, each message's JSON text — rendered as ChatML the way gpt-tokenizer's
 * `encodeChat` renders a chat for the o200k models:
 *
 *   <|im_start|>{kind}<|im_sep|>{segment text}<|im_end|>   one entry per segment, kind = tools | system | messages
 *   <|im_start|>assistant<|im_sep|>                         once, opening the reply
 *
 * Special tokens stop byte-pair merging, so a segment's tokens never depend on its neighbours. The
 * tokens a segment adds (the request with it minus the request without it) are therefore its own
 * text plus its frame, every segment is tokenized once on its own, and the segments plus the
 * reply opener — the fixed overhead — add up to the total exactly. Text that merely looks like a
 * special token is counted as plain text, which is what it is inside a wire body.
 *
 * An image or a document a message carries inline is not counted as its base64 text: the message is
 * counted without that data, and each medium adds the tokens its provider's documented rule gives
 * (providers/media-rules.ts, through message-media.ts). A tool sent for a tool search to load counts
 * nothing until a message loads it (deferred-tools.ts).
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { PROJECT_ROOT } from "../project-root.js";
import type { WireDissection } from "../providers/types.js";
import { type BytePairCore, mergeLongPiecesFast } from "./bpe-merge.js";
import { unloadedTools } from "./deferred-tools.js";
import { leadingMatch } from "./leading-match.js";
import { mediaOf } from "./message-media.js";
import { type RankTable, readRankTable } from "./rank-table.js";
import { TextMemo } from "./text-memo.js";
import type { CacheSegment, Part, TokenCounts } from "./types.js";

export const TOKEN_ENCODING = "o200k_base";

export type RequestTokenCounts = TokenCounts & {
  perTool: number[];
  perSystemPart: number[];
  perMessage: number[];
  /** Tokens no segment owns: the reply opener that ends every request. */
  overhead: number;
};

/**
 * What the capture needs to know about a request's tokens, built from two facts about texts: how
 * many tokens a text has, and how many leading tokens two framed segments share. `token-count-cache.ts`
 * answers those two from a file of earlier answers; the tokenizer answers them otherwise.
 */
export interface TokenMeasure {
  readonly encoding: typeof TOKEN_ENCODING;
  /** Tokens of a plain text. */
  countText(text: string): number;
  /** How many leading tokens two framed segments share (`null` stands for the reply opener). */
  sharedFramedTokens(a: CacheSegment | null, b: CacheSegment | null): number;
  /** Tokens one segment adds to a request: its text and its ChatML frame (a message's media by their rule). */
  segmentTokens(segment: CacheSegment): number;
  countRequestTokens(d: WireDissection): RequestTokenCounts;
}

/** The loaded tokenizer; every function on it is synchronous. */
export interface TokenCounter extends TokenMeasure {
  /** A segment's framed tokens; `null` stands for the reply opener that ends a request. */
  framedTokens(segment: CacheSegment | null): number[];
}

/** The two facts every other figure is derived from (see `TokenMeasure`). */
export type TokenFacts = Pick<TokenMeasure, "countText" | "sharedFramedTokens">;

type Tokenizer = Pick<
  typeof import("gpt-tokenizer/encoding/o200k_base"),
  "encode" | "countTokens" | "ImStart" | "ImSep" | "ImEnd"
>;

type Encoding = Pick<Tokenizer, "encode" | "countTokens">;

let loading: Promise<TokenCounter> | undefined;

/** The tokenizer takes a quarter of a second to load, so it is loaded on first use only. */
export function loadTokenCounter(): Promise<TokenCounter> {
  loading ??= loadEncoding().then(createTokenCounter);
  return loading;
}

/**
 * The ranks as the build step wrote them (scripts/bundle.mjs): gpt-tokenizer's own o200k_base array
 * as a table read in place (rank-table.ts), named after the installed gpt-tokenizer's version.
 */
export function builtRanksPath(): string {
  return join(PROJECT_ROOT, "dist", "tokenizer", `${TOKEN_ENCODING}-${tokenizerVersion()}.ranks`);
}

/** The installed gpt-tokenizer's version: what counted a fact, and whose ranks the build wrote. */
export function tokenizerVersion(): string {
  return (createRequire(import.meta.url)("gpt-tokenizer/package.json") as { version: string }).version;
}

/** gpt-tokenizer's o200k_base encoding, with long pieces merged by bpe-merge.ts. */
async function loadEncoding(): Promise<Tokenizer> {
  const [encoding, special] = await Promise.all([loadGptEncoding(), import("gpt-tokenizer/specialTokens")]);
  // gpt-tokenizer keeps its BytePairEncodingCore private; its merge is what bpe-merge.ts replaces.
  mergeLongPiecesFast(
    (encoding as unknown as { bytePairEncodingCoreProcessor: BytePairCore }).bytePairEncodingCoreProcessor,
  );
  return {
    encode: encoding.encode,
    countTokens: encoding.countTokens,
    ImStart: special.ImStart,
    ImSep: special.ImSep,
    ImEnd: special.ImEnd,
  };
}

/**
 * gpt-tokenizer's o200k_base module holds its 200,000 ranks as one JavaScript array literal, which Node
 * parses at every load (0.37 s of 0.40 s), and its encoder then builds a Map of every token's text. The
 * build's table (rank-table.ts) is read in place instead: gpt-tokenizer's own GptEncoding gets only
 * the ranks that are no text, and asks the table where it would ask its Map. Only where no build
 * wrote the table (tsc's output alone) is the module loaded.
 */
async function loadGptEncoding(): Promise<Encoding> {
  let table: RankTable;
  try {
    table = readRankTable(readFileSync(builtRanksPath()));
  } catch {
    return (await import("gpt-tokenizer/encoding/o200k_base")).default;
  }
  const { GptEncoding } = await import("gpt-tokenizer/GptEncoding");
  const encoding = GptEncoding.getEncodingApi(TOKEN_ENCODING, () => table.byteRanks);
  // gpt-tokenizer keeps the Map private; a version that renamed it must fail here, not count wrong.
  const core = (encoding as unknown as { bytePairEncodingCoreProcessor: { bytePairStringRankEncoder: unknown } })
    .bytePairEncodingCoreProcessor;
  if (!(core.bytePairStringRankEncoder instanceof Map))
    throw new Error(`gpt-tokenizer ${tokenizerVersion()}: its encoder keeps no text-to-rank Map to replace`);
  core.bytePairStringRankEncoder = table.byText;
  return encoding;
}

/** No special tokens recognised: whatever the text holds is counted as text. */
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

/** ChatML frame tokens around a segment besides its kind: `<|im_start|>`, `<|im_sep|>`, `<|im_end|>`. */
const FRAME_SPECIAL_TOKENS = 3;

/** Every request of a run sends the history again; a bounded memo counts each distinct text once. */
const MEMO_MAX_CHARS = 32 * 1024 * 1024;

function createTokenCounter(tokenizer: Tokenizer): TokenCounter {
  const special = (token: string): number => tokenizer.encode(token, { allowedSpecial: new Set([token]) })[0]!;
  const imStart = special(tokenizer.ImStart);
  const imSep = special(tokenizer.ImSep);
  const imEnd = special(tokenizer.ImEnd);
  const encodeText = (text: string): number[] => tokenizer.encode(text, PLAIN_TEXT);
  const kindTokens: Record<Part, number[]> = {
    tools: encodeText("tools"),
    system: encodeText("system"),
    messages: encodeText("messages"),
  };
  const replyOpener = [imStart, ...encodeText("assistant"), imSep];

  const memo = new TextMemo(MEMO_MAX_CHARS);
  const countText = (text: string): number => memo.get(text, (t) => tokenizer.countTokens(t, PLAIN_TEXT));

  const framedTokens = (segment: CacheSegment | null): number[] =>
    segment === null
      ? replyOpener.slice()
      : [imStart, ...kindTokens[segment.kind], imSep].concat(encodeText(segment.text), [imEnd]);

  const sharedFramedTokens = (a: CacheSegment | null, b: CacheSegment | null): number =>
    leadingMatch(framedTokens(a), framedTokens(b));

  return { ...measureTokens({ countText, sharedFramedTokens }), framedTokens };
}

/**
 * Every figure from the two facts. A kind's frame is `<|im_start|>{kind}<|im_sep|>…<|im_end|>` and the
 * reply opener `<|im_start|>assistant<|im_sep|>`; the kind names hold no special tokens, so their
 * count as plain text is the count of their tokens inside the frame.
 */
export function measureTokens(facts: TokenFacts): TokenMeasure {
  const { countText } = facts;
  const segmentTokens = (segment: CacheSegment): number => {
    if (segment.unloaded) return 0;
    const media = segment.kind === "messages" ? mediaOf(segment.text, segment.model ?? "") : undefined;
    const text = media ? countText(media.json) + media.tokens : countText(segment.text);
    return FRAME_SPECIAL_TOKENS + countText(segment.kind) + text;
  };

  const countRequestTokens = (d: WireDissection): RequestTokenCounts => {
    const unloaded = unloadedTools(d);
    const perTool = d.tools.map((tool, i) => (unloaded.has(i) ? 0 : segmentTokens({ kind: "tools", text: tool.json })));
    const perSystemPart = d.systemParts.map((part) => segmentTokens({ kind: "system", text: part }));
    const perMessage = d.messages.map((message) =>
      segmentTokens({ kind: "messages", text: message.json, model: d.model }),
    );
    const tools = sum(perTool);
    const system = sum(perSystemPart);
    const messages = sum(perMessage);
    // `<|im_start|>` and `<|im_sep|>` around the word that opens the reply.
    const overhead = 2 + countText("assistant");
    return {
      encoding: TOKEN_ENCODING,
      tools,
      system,
      messages,
      total: tools + system + messages + overhead,
      perTool,
      perSystemPart,
      perMessage,
      overhead,
    };
  };

  return {
    encoding: TOKEN_ENCODING,
    countText,
    sharedFramedTokens: facts.sharedFramedTokens,
    segmentTokens,
    countRequestTokens,
  };
}

function sum(values: number[]): number {
  let total = 0;
  for (const value of values) total += value;
  return total;
}
