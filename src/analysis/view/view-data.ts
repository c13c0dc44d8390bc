/**
 * The data of a `view` page, streamed as one JSON document a line at a time.
 *
 * A run repeats itself: every request sends the tools, the system prompt and the whole history
 * again. The page therefore stores each distinct piece once, content-addressed, in an `items`
 * table — a tool definition, a system part, a message, a tool set (which definitions), a system
 * set, a message-history node (parent node + one message: histories that share a prefix share
 * nodes), a wire-body frame (the body with its segments cut out, a run of equal holes written once
 * with its count), a piece that frames hold a hole for (a part whose segments are not all its own
 * text, part-items.ts) — and each request points into it.
 * Tool sets and system sets are keyed by the records' own `hashes`, so an unchanged prompt is not
 * even hashed again.
 *
 * Layout (what the page's script relies on): two JSON documents, each valid on its own, in which
 * every request and every item is one line, so the page parses the request index at once and an
 * item only when a detail needs it. The index comes first and the page's script right after it, so
 * the timeline is drawn while the browser is still reading the items, which are most of the page:
 *
 *   index:  {"v":1,"meta":{…}
 *           ,"requests":[
 *           {…}              one line per request (a leading comma from the second on)
 *           ]
 *           ,"pairs":[ … ]   diff mode only: one line per aligned pair
 *           }
 *   items:  [
 *           […]              one line per item; an item's id is its position
 *           ]
 *
 * Each document is written to a file of its own (`writeViewData`); view-page.ts puts them into the
 * saved page (each gzip'd, in base64) or into the live view's data (as they are). Items are found
 * while requests are written, so the requests go to a side file that the index takes in at the end;
 * nothing of the run is held in memory but the content addresses.
 */
import { createHash } from "node:crypto";
import { closeSync, openSync, readSync, unlinkSync, writeSync } from "node:fs";
import type { TokenMeasure } from "../../capture/tokens.js";
import type { MarkerSpec, RequestRecord } from "../../capture/types.js";
import { codecFor } from "../../providers/codecs.js";
import type { WireDissection } from "../../providers/types.js";
import { providerSummary } from "../cache-agreement.js";
import { sourceGroup } from "../context/source-groups.js";
import { fieldValue } from "../diff/body-fields.js";
import type { RequestDiff } from "../diff/diff.js";
import { kindLabel, sharedTokensOf } from "../format.js";
import type { LazyPayload, RequestPayload, RunSource } from "../load-run.js";
import { PartItems } from "./part-items.js";
import type { ViewItem, ViewMeta, ViewPair, ViewReply, ViewRequest, ViewRun } from "./types.js";

/**
 * Where a segment's placeholder stands in a frame: U+0000 cannot occur in JSON text (control
 * characters inside strings must be escaped, RFC 8259 §7), so it never collides with the body.
 * The letter after it says which of the request's segments goes there, taken in order per kind.
 */
const HOLE = "\u0000";

/**
 * A run of equal holes (a hole, its letter and the text up to the next hole: `\0M,` for each message
 * but the last) is written once after U+0002, its count and U+0002 again: a frame of a request that
 * sends 1,200 messages says so in a few characters, not 1,200 holes. U+0002 cannot occur in JSON
 * text either.
 */
const REPEAT = "\u0002";
function compactFrame(frame: string): string {
  // Each hole with its letter and the text up to the next one, after the text before the first.
  const [head, ...units] = frame.split(HOLE);
  let text = head ?? "";
  for (let i = 0; i < units.length; ) {
    let end = i + 1;
    while (end < units.length && units[end] === units[i]) end++;
    text += `${end - i > 1 ? `${REPEAT}${end - i}${REPEAT}` : ""}${HOLE}${units[i]}`;
    i = end;
  }
  return text;
}

/** Buffered synchronous writes: the page is written in a few hundred large writes, not one per line. */
export class FileSink {
  private parts: string[] = [];
  private size = 0;
  readonly fd: number;
  bytes = 0;
  constructor(readonly path: string) {
    this.fd = openSync(path, "w");
  }
  write(text: string): void {
    this.parts.push(text);
    this.size += text.length;
    if (this.size >= 1 << 20) this.flush();
  }
  flush(): void {
    if (this.parts.length === 0) return;
    const buffer = Buffer.from(this.parts.join(""), "utf8");
    writeSync(this.fd, buffer);
    this.bytes += buffer.length;
    this.parts = [];
    this.size = 0;
  }
  close(): void {
    this.flush();
    closeSync(this.fd);
  }
}

/**
 * JSON for inside `<script type="application/json">`: `<` becomes `\u003c`, so neither `</script>`
 * nor `<!--` can end or alter the element (HTML §4.12.1.3, restrictions for contents of script
 * elements); U+2028/2029 are escaped as well, so the text stays one line for every reader.
 */
function scriptSafeJson(value: unknown): string {
  return JSON.stringify(value).replace(
    /[<\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

const bytesOf = (text: string) => Buffer.byteLength(text, "utf8");
const digest = (text: string) => createHash("sha1").update(text).digest("base64");

/** Item ids below this make a node's key exact: (parent + 1) × 2^26 + message stays under 2^53. */
const NODE_KEY_BASE = 2 ** 26;

/** The content-addressed item table, written to its own file as items are first seen. */
class ItemTable {
  private ids = new Map<string, number>();
  private nodes = new Map<number, number>();
  private next = 0;
  /** The items of Messages bodies' parts, each part made once. */
  readonly parts = new PartItems(this, (letter) => HOLE + letter);
  constructor(
    private readonly sink: FileSink,
    private readonly counter: TokenMeasure,
  ) {}

  /** Ends the document: `[` and `]` around the item lines, none or many. */
  close(): void {
    this.sink.write(`${this.next === 0 ? "[\n" : ""}]`);
    this.sink.close();
  }

  private add(key: string, item: () => ViewItem): number {
    const known = this.ids.get(key);
    if (known !== undefined) return known;
    // The item first: a set adds its members, which must take the ids (lines) before its own.
    const id = this.write(item());
    this.ids.set(key, id);
    return id;
  }

  private write(item: ViewItem): number {
    const id = this.next++;
    this.sink.write(`${id === 0 ? "[\n" : ","}${scriptSafeJson(item)}\n`);
    return id;
  }

  /** Facts of one request: never shared, so not addressed. */
  request(r: RequestRecord, cost: string[] | null, reply: ViewReply | null): number {
    return this.write(["req", r.model, r.hashes.body, cost, reply, r.sources ?? null]);
  }

  tool(name: string, json: string): number {
    return this.add(`t${digest(json)}`, () => [
      "tool",
      name,
      this.counter.segmentTokens({ kind: "tools", text: json }),
      bytesOf(json),
      json,
    ]);
  }
  systemPart(text: string): number {
    return this.add(`s${digest(text)}`, () => [
      "sys",
      this.counter.segmentTokens({ kind: "system", text }),
      bytesOf(text),
      text,
    ]);
  }
  message(role: string, json: string): number {
    return this.add(`m${digest(json)}`, () => [
      "msg",
      role,
      this.counter.segmentTokens({ kind: "messages", text: json }),
      bytesOf(json),
      json,
    ]);
  }
  /** A set keyed by the record's hash: its members are read (and hashed) only the first time. */
  set(kind: "tools" | "system", hash: string, members: () => number[]): number {
    return this.add(`${kind}:${hash}`, () => [kind, members()]);
  }
  /**
   * A history node, by its parent and message as one number: a session asks for each of its nodes
   * again in every later request (at 1,200 requests, 1.4 million times), where a string key cost
   * half a second of building and hashing keys and of collecting them.
   */
  node(parent: number, message: number): number {
    if (message >= NODE_KEY_BASE) throw new Error(`the page has more than ${NODE_KEY_BASE} items`);
    const key = (parent + 1) * NODE_KEY_BASE + message;
    let id = this.nodes.get(key);
    if (id === undefined) {
      id = this.write(["node", parent, message]);
      this.nodes.set(key, id);
    }
    return id;
  }
  piece(text: string): number {
    return this.add(`p${digest(text)}`, () => ["piece", text]);
  }
  /** A frame, with the ids of the stored pieces its holes take (part-items.ts), when it has any. */
  frame(text: string, pieces: readonly number[] = []): number {
    if (pieces.length === 0) return this.add(`f${digest(text)}`, () => ["frame", compactFrame(text)]);
    return this.add(`f${digest(text)} ${pieces.join(",")}`, () => ["frame", compactFrame(text), [...pieces]]);
  }
}

/** Cut the segments out of a wire body; the frame left rebuilds the exact body with them put back. */
export function bodyFrame(body: string, d: WireDissection): string {
  const needles: [string, string][] = [
    ...d.tools.map((t): [string, string] => ["T", t.json]),
    ...d.systemParts.map((p): [string, string] => ["S", JSON.stringify(p)]),
    ...d.messages.map((m): [string, string] => ["M", m.json]),
  ];
  const found: { at: number; end: number; code: string; skips: string }[] = [];
  const from: Record<string, number> = { T: 0, S: 0, M: 0 };
  // A short needle (an empty system part is `""`) could match inside something else, so its text stays
  // literal; a skip (its letter in lower case) still counts it, written before the next hole of its
  // kind (or at the end), so every later segment of that kind fills its own hole.
  const skips: Record<string, string> = { T: "", S: "", M: "" };
  for (const [code, needle] of needles) {
    if (needle.length < 3) {
      skips[code] += HOLE + code.toLowerCase();
      continue;
    }
    const at = body.indexOf(needle, from[code]);
    if (at < 0) return body;
    from[code] = at + needle.length;
    found.push({ at, end: at + needle.length, code, skips: skips[code]! });
    skips[code] = "";
  }
  found.sort((x, y) => x.at - y.at);
  let frame = "";
  let pos = 0;
  for (const f of found) {
    if (f.at < pos) return body;
    frame += body.slice(pos, f.at) + f.skips + HOLE + f.code;
    pos = f.end;
  }
  return frame + body.slice(pos) + skips.T + skips.S + skips.M;
}

function toolChange(previous: string[] | null, tools: string[]): string[] {
  if (!previous) return [];
  const before = new Set(previous);
  const after = new Set(tools);
  return [
    ...tools.filter((t) => !before.has(t)).map((t) => `+${t}`),
    ...previous.filter((t) => !after.has(t)).map((t) => `-${t}`),
  ];
}

/**
 * The deferred tools the capture counted at 0 tokens (capture/deferred-tools.ts: no message of the
 * request loads them), by their place in the tool set, so the page does not show them as context.
 */
function unloadedToolPlaces(r: RequestRecord): Pick<ViewRequest, "ud"> {
  const { deferredTools, toolTokens } = r;
  if (!deferredTools || !toolTokens) return {};
  const deferred = new Set(deferredTools);
  const ud = r.tools.flatMap((name, i) => (deferred.has(name) && toolTokens[i] === 0 ? [i] : []));
  return ud.length > 0 ? { ud } : {};
}

function requestEntry(
  run: number,
  r: RequestRecord,
  previousTools: string[] | null,
): Omit<ViewRequest, "T" | "S" | "M" | "F" | "D"> {
  const p = r.prefix;
  const markers = Object.entries(r.markers).filter(([, n]) => n > 0);
  const kind = kindLabel(r);
  const change = kind === "loop" && !p?.newConversation ? toolChange(previousTools, r.tools) : [];
  return {
    ...(run === 0 ? {} : { r: run }),
    s: r.seq,
    ...(kind === "loop" ? {} : { k: kind }),
    b: [r.toolsBytes, r.systemBytes, r.messagesBytes, r.bodyBytes],
    t: r.tokens ? [r.tokens.tools, r.tokens.system, r.tokens.messages, r.tokens.total] : null,
    ...(r.systemParts.length > 1 ? { sp: r.systemParts.map((s) => s.bytes) } : {}),
    ...(p && (p.breakAt !== null || p.sharedBytes > 0)
      ? { kept: [p.sharedBytes, sharedTokensOf(r)] as [number, number | null] }
      : {}),
    ...(typeof p?.from === "number" ? { fr: p.from } : {}),
    ...(p?.newConversation ? { nc: 1 as const } : {}),
    ...(p?.breakAt ? { brk: [p.breakAt, p.breakDetail ?? ""] as [string, string] } : {}),
    ...(r.cacheDiagnostics ? { cd: providerSummary(r) } : {}),
    ...(markers.length > 0 ? { mk: Object.fromEntries(markers) } : {}),
    ...(change.length > 0 ? { tc: change } : {}),
    ...unloadedToolPlaces(r),
    ...(r.conversation
      ? { c: [r.conversation.id, r.conversation.role, r.conversation.parent ?? ""] as ViewRequest["c"] }
      : {}),
  };
}

/** The source groups met so far, each with its place in the page's `meta.groups`. */
class GroupTable {
  readonly names: string[] = [];
  private readonly places = new Map<string, number>();

  /** A record's tokens by group, by each group's place; nothing when the record has no sources. */
  tokensOf(record: RequestRecord): Pick<ViewRequest, "g"> {
    if (!record.sources) return {};
    const tokens: number[] = [];
    for (const [source, n] of Object.entries(record.sources)) {
      const group = sourceGroup(source);
      let place = this.places.get(group);
      if (place === undefined) {
        place = this.names.push(group) - 1;
        this.places.set(group, place);
      }
      while (tokens.length <= place) tokens.push(0);
      tokens[place]! += n;
    }
    return { g: tokens };
  }
}

/** Records joined with their wire bodies by seq (read when asked for); a record without a body gets null. */
function* withPayloads(source: RunSource): Generator<[RequestRecord, LazyPayload | null]> {
  const payloads = source.hasPayloads ? source.lazyPayloads()[Symbol.iterator]() : null;
  let next = payloads?.next();
  for (const record of source.records()) {
    while (next && !next.done && next.value.seq < record.seq) next = payloads!.next();
    yield [record, next && !next.done && next.value.seq === record.seq ? next.value : null];
  }
}

export interface ViewDataOptions {
  /** Counts each segment the page shows (view.ts makes sure it knows every one). */
  counter: TokenMeasure;
  markers: Record<string, MarkerSpec>;
  /** Bytes of the run files, for the page's size ratio. */
  rawBytes: number;
  /** `view --cost`: per run, each request's cost lines by seq (as `show --cost` prints them). */
  costLines?: Map<number, string[]>[];
  /** Per run, each request's reply as `show` prints it, by seq (view-inputs.ts, `viewReplies`). */
  replies?: Map<number, ViewReply>[];
}

/**
 * Writes each run's requests as the page's entries, one JSON line each, to `lines`, their items to
 * `items`; returns the runs' summaries and, per run, each seq's place among the entries.
 */
function writeRequests(
  sources: RunSource[],
  items: ItemTable,
  lines: FileSink,
  options: ViewDataOptions,
): { runs: ViewRun[]; index: Map<number, number>[]; groups: string[] } {
  const runs: ViewRun[] = sources.map((s) => ({
    label: s.label,
    probe: "",
    runId: "",
    requests: 0,
    lost: s.lost?.() ?? 0,
    secrets: 0,
  }));
  const index: Map<number, number>[] = sources.map(() => new Map());
  const groups = new GroupTable();
  let n = 0;
  sources.forEach((source, run) => {
    // A tool-set change is against the request the prefix was read from; a record without `from`
    // (written before it existed) is compared with the previous loop request of its conversation.
    const toolsOf = new Map<number, string[]>();
    const previousLoop = new Map<string, string[]>();
    for (const [record, payload] of withPayloads(source)) {
      const conversation = record.conversation?.id ?? "";
      const from = record.prefix?.from;
      const previousTools =
        from === undefined
          ? (previousLoop.get(conversation) ?? null)
          : from === null
            ? null
            : (toolsOf.get(from) ?? null);
      runs[run]!.probe ||= record.probe;
      runs[run]!.runId ||= record.run;
      runs[run]!.requests++;
      runs[run]!.secrets += record.secrets?.replaced ?? 0;
      const entry: ViewRequest = {
        ...requestEntry(run, record, previousTools),
        ...groups.tokensOf(record),
        ...itemRefs(items, record, payload),
        D: items.request(
          record,
          options.costLines?.[run]?.get(record.seq) ?? null,
          options.replies?.[run]?.get(record.seq) ?? null,
        ),
      };
      if (record.kind === "loop") previousLoop.set(conversation, record.tools);
      toolsOf.set(record.seq, record.tools);
      index[run]!.set(record.seq, n);
      lines.write(`${n === 0 ? "" : ","}${scriptSafeJson(entry)}\n`);
      n++;
    }
  });
  return { runs, index, groups: groups.names };
}

/** The `pairs` array of a two-run page: each aligned pair by its two entries' places. */
function writePairs(out: FileSink, pairs: Iterable<RequestDiff>, index: Map<number, number>[]): void {
  out.write(',"pairs":[\n');
  let first = true;
  for (const d of pairs) {
    out.write(`${first ? "" : ","}${scriptSafeJson(viewPair(d, index))}\n`);
    first = false;
  }
  out.write("]\n");
}

/** Where `writeViewData` writes the two documents of the page's layout. */
export interface ViewDataFiles {
  index: string;
  items: string;
}

/**
 * Writes the index of one run, or of two runs and their alignment (`pairs`, from diff.ts), to
 * `files.index`, and the items to `files.items`; the requests pass through a side file beside the
 * index.
 */
export function writeViewData(
  files: ViewDataFiles,
  sources: RunSource[],
  pairs: Iterable<RequestDiff> | null,
  options: ViewDataOptions,
): void {
  const items = new ItemTable(new FileSink(files.items), options.counter);
  const requestsPath = `${files.index}.requests`;
  const requestLines = new FileSink(requestsPath);
  const { runs, index, groups } = writeRequests(sources, items, requestLines, options);
  requestLines.close();
  items.close();
  const meta: ViewMeta = {
    mode: pairs ? "diff" : "run",
    runs,
    encoding: options.counter.encoding,
    markers: markerPatterns(options.markers),
    groups,
    rawBytes: options.rawBytes,
  };
  const out = new FileSink(files.index);
  try {
    out.write(`{"v":1,"meta":${scriptSafeJson(meta)}\n,"requests":[\n`);
    appendFile(out, requestsPath);
    out.write("]\n");
    if (pairs) writePairs(out, pairs, index);
    out.write("}");
  } finally {
    out.close();
  }
}

type ItemRefs = Pick<ViewRequest, "T" | "S" | "M" | "F">;

/**
 * A request's items from its body's parts, each distinct part made once per run (part-items.ts);
 * from its body taken apart whole where the parts do not describe it.
 */
function itemRefs(items: ItemTable, record: RequestRecord, payload: LazyPayload | null): ItemRefs {
  const stored = payload?.stored();
  if (!payload || !stored || stored.api === null) return { T: -1, S: -1, M: -1, F: -1 };
  const made = items.parts.of(stored.api, stored.body);
  if (!made) {
    const { api, body } = payload.load();
    return wholeItemRefs(items, record, body, codecFor(api!).dissect(body));
  }
  const T = items.set("tools", record.hashes.tools, made.tools);
  const S = items.set("system", record.hashes.system, made.system);
  let M = -1;
  for (const m of made.messages()) M = items.node(M, m);
  // Made from the parts where they make it, else from the body joined.
  const frame = made.frame() ?? { text: wholeFrame(payload.load()), pieces: [] };
  return { T, S, M, F: items.frame(frame.text, frame.pieces) };
}

function wholeFrame({ api, body }: RequestPayload): string {
  return bodyFrame(body, codecFor(api!).dissect(body));
}

function wholeItemRefs(items: ItemTable, record: RequestRecord, body: string, d: WireDissection): ItemRefs {
  const T = items.set("tools", record.hashes.tools, () => d.tools.map((t) => items.tool(t.name, t.json)));
  const S = items.set("system", record.hashes.system, () => d.systemParts.map((p) => items.systemPart(p)));
  let M = -1;
  for (const m of d.messages) M = items.node(M, items.message(m.role, m.json));
  return { T, S, M, F: items.frame(bodyFrame(body, d)) };
}

function viewPair(d: RequestDiff, index: Map<number, number>[]): ViewPair {
  return {
    a: d.seqA === null ? -1 : index[0]!.get(d.seqA)!,
    b: d.seqB === null ? -1 : index[1]!.get(d.seqB)!,
    same: d.identical,
    add: d.toolsAdded,
    rem: d.toolsRemoved,
    chg: d.toolsChanged.map((c) => c.name),
    div: d.divergesIn,
    fld: (d.bodyFields ?? []).map((f): [string, string, string] => [f.path, fieldValue(f.a), fieldValue(f.b)]),
    more: d.moreFields,
  };
}

function markerPatterns(markers: Record<string, MarkerSpec>): ViewMeta["markers"] {
  return Object.fromEntries(
    Object.entries(markers).map(([name, spec]) => [
      name,
      typeof spec.match === "string"
        ? { in: spec.in, text: spec.match }
        : { in: spec.in, re: spec.match.source, flags: spec.match.flags.replace("g", "") },
    ]),
  );
}

/** Copies a side file to the end of `out` and removes it. */
export function appendFile(out: FileSink, path: string): void {
  out.flush();
  const buffer = Buffer.allocUnsafe(1 << 20);
  const fd = openSync(path, "r");
  try {
    for (let read = readSync(fd, buffer); read > 0; read = readSync(fd, buffer)) {
      writeSync(out.fd, buffer, 0, read);
      out.bytes += read;
    }
  } finally {
    closeSync(fd);
    unlinkSync(path);
  }
}
