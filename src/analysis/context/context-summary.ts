/**
 * `report --context`: where a run's context went, from the sources the capture stored with each
 * record (capture/context-sources.ts), read in one pass: each request's sources, each source's
 * tokens on the last request and over the session, and the tools sent but never called (by name,
 * in any response of the run; a namespaced tool also by the name within its namespace).
 */
import { toolSource } from "../../capture/context-sources.js";
import type { RequestRecord } from "../../capture/types.js";

export interface ContextRequest {
  seq: number;
  kind: RequestRecord["kind"];
  total: number;
  /** Tokens by source, adding up to `total`. */
  sources: Record<string, number>;
}

export interface SourceTally {
  source: string;
  /** Its tokens on the last request of the main conversation (0 when that request had none). */
  last: number;
  /** Its tokens summed over every request of the session. */
  session: number;
  /** `session` as a fraction of all requests' tokens. */
  share: number;
}

export interface UnusedTool {
  tool: string;
  source: string;
  /** How many requests sent its definition, and the tokens those definitions came to. */
  requests: number;
  tokens: number;
}

export interface ContextSummary {
  requests: ContextRequest[];
  /** The seq of the request `last` describes, or null when none carried sources. */
  lastSeq: number | null;
  sources: SourceTally[];
  unused: UnusedTool[];
  /** Requests without sources: recorded before sources were counted, or with token counting off. */
  uncounted: number[];
}

const isCalled = (tool: string, called: Set<string>) =>
  called.has(tool) || (tool.includes(".") && called.has(tool.slice(tool.lastIndexOf(".") + 1)));

/**
 * The source a tool was counted under: the record names its sources, so the server a direct tool
 * (`<server>_<tool>`) belongs to is one of the record's `mcp:` sources.
 */
function sourceOfTool(tool: string, sources: Record<string, number>): string {
  const servers = Object.keys(sources)
    .filter((s) => s.startsWith("mcp:"))
    .map((s) => s.slice("mcp:".length));
  return toolSource(
    tool,
    servers.sort((a, b) => b.length - a.length),
  );
}

/** Read in one pass, keeping of each record only what the summary needs. */
class ContextTally {
  readonly requests: ContextRequest[] = [];
  readonly uncounted: number[] = [];
  readonly session = new Map<string, number>();
  readonly toolCosts = new Map<string, UnusedTool>();
  readonly called = new Set<string>();
  /** The last request of the main conversation (a side call's or a subagent's ends nothing), else the last. */
  last: ContextRequest | undefined;
  lastAny: ContextRequest | undefined;

  add(record: RequestRecord): void {
    for (const name of record.response?.calls ?? []) this.called.add(name);
    if (record.sources === undefined || record.tokens === null) {
      this.uncounted.push(record.seq);
      return;
    }
    const request = { seq: record.seq, kind: record.kind, total: record.tokens.total, sources: record.sources };
    this.requests.push(request);
    this.lastAny = request;
    if ((record.conversation?.role ?? "main") === "main") this.last = request;
    for (const [source, tokens] of Object.entries(record.sources))
      this.session.set(source, (this.session.get(source) ?? 0) + tokens);
    record.tools.forEach((tool, i) => {
      const cost = this.toolCosts.get(tool) ?? {
        tool,
        source: sourceOfTool(tool, record.sources!),
        requests: 0,
        tokens: 0,
      };
      cost.requests++;
      cost.tokens += record.toolTokens?.[i] ?? 0;
      this.toolCosts.set(tool, cost);
    });
  }

  summary(): ContextSummary {
    const last = this.last ?? this.lastAny;
    let grand = 0;
    for (const tokens of this.session.values()) grand += tokens;
    const sources = [...this.session]
      .map(([source, tokens]) => ({
        source,
        last: last?.sources[source] ?? 0,
        session: tokens,
        share: grand === 0 ? 0 : tokens / grand,
      }))
      .sort((a, b) => b.session - a.session || a.source.localeCompare(b.source));
    const unused = [...this.toolCosts.values()]
      .filter((cost) => !isCalled(cost.tool, this.called))
      .sort((a, b) => b.tokens - a.tokens || a.tool.localeCompare(b.tool));
    return { requests: this.requests, lastSeq: last?.seq ?? null, sources, unused, uncounted: this.uncounted };
  }
}

export function contextSummary(records: Iterable<RequestRecord>): ContextSummary {
  const tally = new ContextTally();
  for (const record of records) tally.add(record);
  return tally.summary();
}
