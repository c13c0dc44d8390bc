/**
 * The shapes of a `view` page's data: what src/analysis/view/view-data.ts writes and the page's script
 * (src/analysis/view/browser/) reads. Types only, so the browser code can share them without taking
 * anything of the server side into its bundle or its DOM-typed program (tsconfig.browser.json).
 */
import type { ConversationRef, MarkerSpec, RequestRecord } from "../../capture/types.js";

/**
 * One request of the index. Short keys, and keys left out at their usual value (run 0, kind loop,
 * no break, no markers, no tool change): a 100,000-request run has 100,000 of these lines, and the
 * page reads them all before it draws. What only a detail shows is in the request's own item (`D`).
 */
export interface ViewRequest {
  /** Which run: absent for the first, 1 for run B of a diff. */
  r?: number;
  s: number;
  /** Absent for a loop request. */
  k?: RequestRecord["kind"];
  /** Bytes of tools, system, messages, body. */
  b: [number, number, number, number];
  /** Tokens of tools, system, messages, total; null when the capture did not count them. */
  t: [number, number, number, number] | null;
  /** Bytes of each system part, when there are several (stable catalog and dynamic environment). */
  sp?: number[];
  /** The cache prefix read: shared bytes and tokens; absent when nothing is shared. */
  kept?: [number, number | null];
  /** The request the prefix is read from (`prefix.from`); absent when none, or a record from before it. */
  fr?: number;
  /** 1 when the request starts its conversation (`prefix.newConversation`): what it does not share is no break. */
  nc?: 1;
  /** Where the prefix broke and why. */
  brk?: [string, string];
  /** The provider's cache diagnostics beside ours (`provider (anthropic): miss: tools_changed, agrees`), when it was asked. */
  cd?: string;
  /** Markers with a count above zero. */
  mk?: Record<string, number>;
  /** Tool-set change against the request the prefix is read from (before `from`: the previous loop request): `+a_tool1`, `-read`. */
  tc?: string[];
  /** Places in the tool set of the tools sent for a tool search and loaded by no message: not in the context, 0 tokens. */
  ud?: number[];
  /** Its conversation: id (`c1`…), role, the parent conversation's id ("" for a main one); absent when the record has none. */
  c?: [string, ConversationRef["role"], string];
  /**
   * Tokens by source group (analysis/context/source-groups.ts), by the group's place in `meta.groups`;
   * a group first seen after the request is left off the end. Absent when the record has no sources.
   */
  g?: number[];
  /** Item ids: tool set, system set, last message-history node, wire-body frame (-1: none or no body kept), facts. */
  T: number;
  S: number;
  M: number;
  F: number;
  D: number;
}

export type ViewItem =
  | ["tool", string, number, number, string]
  | ["sys", number, number, string]
  | ["msg", string, number, number, string]
  | ["tools", number[]]
  | ["system", number[]]
  | ["node", number, number]
  /**
   * The body with U+0000 and a letter where each segment goes (T, S, M: the next tool, system part,
   * message), or where the next stored piece goes (P: the next id of the list, present when it has
   * any); U+0002 n U+0002 before a hole: n of it.
   */
  | ["frame", string]
  | ["frame", string, number[]]
  /**
   * An element of the body whose segments are not all its own text (a Responses namespace's first
   * tool, a developer message of two text parts), stored once for every frame that holds it: its
   * text with a hole for each segment found in it, and, for one that is not, U+0000 and the kind's
   * letter in lower case (t, s, m), which takes that segment without writing it.
   */
  | ["piece", string]
  /**
   * A request's own facts: model, sha256 of its wire body, its cost lines (`view --cost`), the
   * model's reply with the usage as reported (null: none was read), and its tokens by source as the
   * capture stored them (null: the record has none).
   */
  | ["req", string, string, string[] | null, ViewReply | null, Record<string, number> | null];

/** The model's reply as the detail shows it: `show`'s lines up to the usage, then the usage as a table. */
export interface ViewReply {
  lines: string[];
  usage: {
    /** Whose the reported figures are: the provider's, a mock's estimate, none reported. */
    whose: string;
    /** Name, reported, ours ("—": none). */
    rows: [string, string, string][];
    /** The usage object as sent, or null. */
    raw: string | null;
  };
}

export interface ViewRun {
  label: string;
  probe: string;
  runId: string;
  requests: number;
  /** Requests relayed but never recorded (RunSource.lost). */
  lost: number;
  /** Secrets the capture replaced with markers in the run's stored bodies. */
  secrets: number;
}

export interface ViewMeta {
  mode: "run" | "diff";
  runs: ViewRun[];
  encoding: string;
  /** Marker patterns from the probe file, for highlighting: a literal, or a regular expression's source and flags. */
  markers: Record<string, { in: MarkerSpec["in"]; text?: string; re?: string; flags?: string }>;
  /** The source groups of the requests' `g`, in the order first seen. */
  groups: string[];
  /** Bytes of the run files the page was made from (requests.jsonl + payloads.jsonl). */
  rawBytes: number;
}

/** A diff's aligned pair: request index on each side (-1: none) and what differs. */
export interface ViewPair {
  a: number;
  b: number;
  same: boolean;
  add: string[];
  rem: string[];
  chg: string[];
  div: string | null;
  /** Body fields outside the three parts that differ: path, A's value, B's value (`absent`). */
  fld: [string, string, string][];
  /** Differing fields past those listed. */
  more: number;
}

/** One kind of item, by its tag: `ItemOf<"tool">` is a tool definition. */
export type ItemOf<K extends ViewItem[0]> = Extract<ViewItem, [K, ...unknown[]]>;
