/**
 * `report --context`: where a run's context went, from the sources the capture stored with each
 * record (capture/context-sources.ts), read in one pass: each request's sources, each source's
 * tokens on the last request and over the session, and the tools sent but never called (by name,
 * in any response of the run; a namespaced tool also by the name within its namespace).
 */
import { apportion, toolSource } from "../../capture/context-sources.js";
import type { RequestRecord } from "../../capture/types.js";
import { tokenGap } from "../token-gap.js";

export interface ContextRequest {
  seq: number;
  kind: RequestRecord["kind"];
  total: number;
  /** Tokens by source, adding up to `total`. */
  sources: Record<string, number>;
  /** The input tokens the provider reported for it (cached ones included), null when it reported none. */
  provider: number | null;
  /** `sources` scaled to `provider` by each source's share, adding up to it; null with `provider`. */
  scaled: Record<string, number> | null;
}

export interface SourceTally {
  source: string;
  /** Its tokens on the first request of the main conversation: beside `last`, how it grew. */
  first: number;
  /** Its tokens on the last request of the main conversation (0 when that request had none). */
  last: number;
  /** Its tokens summed over every request of the session. */
  session: number;
  /** `session` as a fraction of all requests' tokens. */
  share: number;
  /** `last` and `session` scaled to the provider's counts, over the requests it reported one for; null when none. */
  lastScaled: number | null;
  sessionScaled: number | null;
}

export interface UnusedTool {
  tool: string;
  source: string;
  /** How many requests sent its definition, and the tokens those definitions came to. */
  requests: number;
  tokens: number;
}

/** A skill listed in the skills index and never loaded: what its entry cost over the run. */
export interface UnusedSkill {
  skill: string;
  requests: number;
  tokens: number;
}

export interface ContextSummary {
  requests: ContextRequest[];
  /** The seq of the request `last` describes, or null when none carried sources. */
  lastSeq: number | null;
  /** The seq of the request `first` describes, or null when none carried sources. */
  firstSeq: number | null;
  /** The source that takes the most of the last request, and its tokens there; null without one. */
  dominant: { source: string; tokens: number; total: number } | null;
  sources: SourceTally[];
  unused: UnusedTool[];
  /** Skills whose index entry was sent (`skill-index:<name>`) and whose body never was (`skill:<name>`). */
  unusedSkills: UnusedSkill[];
  /** Requests without sources: recorded before sources were counted, or with token counting off. */
  uncounted: number[];
  /** How many of `requests` the provider reported input tokens for (their sources are scaled to it). */
  scaledRequests: number;
}

/** A request's sources scaled to the provider's input tokens, by each source's share of ours. */
function scaledSources(record: RequestRecord): Pick<ContextRequest, "provider" | "scaled"> {
  const gap = tokenGap(record);
  if (gap === null || record.sources === undefined) return { provider: null, scaled: null };
  const scaled = apportion(new Map(Object.entries(record.sources)), gap.provider);
  return { provider: gap.provider, scaled: Object.fromEntries(scaled) };
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

const SKILL_INDEX = "skill-index:";

/** The source that takes the most of a request (the first by name on a tie). */
function dominantSource(request: ContextRequest): ContextSummary["dominant"] {
  const [top] = Object.entries(request.sources).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  return top ? { source: top[0], tokens: top[1], total: request.total } : null;
}

/** Read in one pass, keeping of each record only what the summary needs. */
class ContextTally {
  readonly requests: ContextRequest[] = [];
  readonly uncounted: number[] = [];
  readonly session = new Map<string, number>();
  readonly toolCosts = new Map<string, UnusedTool>();
  readonly called = new Set<string>();
  readonly sessionScaled = new Map<string, number>();
  /** How many requests carried each source. */
  readonly carried = new Map<string, number>();
  scaledRequests = 0;
  /** The last request of the main conversation (a side call's or a subagent's ends nothing), else the last. */
  last: ContextRequest | undefined;
  lastAny: ContextRequest | undefined;
  first: ContextRequest | undefined;
  firstAny: ContextRequest | undefined;

  add(record: RequestRecord): void {
    for (const name of record.response?.calls ?? []) this.called.add(name);
    if (record.sources === undefined || record.tokens === null) {
      this.uncounted.push(record.seq);
      return;
    }
    const request = {
      seq: record.seq,
      kind: record.kind,
      total: record.tokens.total,
      sources: record.sources,
      ...scaledSources(record),
    };
    this.requests.push(request);
    this.lastAny = request;
    this.firstAny ??= request;
    if ((record.conversation?.role ?? "main") === "main") {
      this.last = request;
      this.first ??= request;
    }
    for (const [source, tokens] of Object.entries(record.sources)) {
      this.session.set(source, (this.session.get(source) ?? 0) + tokens);
      this.carried.set(source, (this.carried.get(source) ?? 0) + 1);
    }
    if (request.scaled) {
      this.scaledRequests++;
      for (const [source, tokens] of Object.entries(request.scaled))
        this.sessionScaled.set(source, (this.sessionScaled.get(source) ?? 0) + tokens);
    }
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
    const first = this.first ?? this.firstAny;
    let grand = 0;
    for (const tokens of this.session.values()) grand += tokens;
    const sources = [...this.session]
      .map(([source, tokens]) => ({
        source,
        first: first?.sources[source] ?? 0,
        last: last?.sources[source] ?? 0,
        session: tokens,
        share: grand === 0 ? 0 : tokens / grand,
        lastScaled: last?.scaled ? (last.scaled[source] ?? 0) : null,
        sessionScaled: this.scaledRequests === 0 ? null : (this.sessionScaled.get(source) ?? 0),
      }))
      .sort((a, b) => b.session - a.session || a.source.localeCompare(b.source));
    const unused = [...this.toolCosts.values()]
      .filter((cost) => !isCalled(cost.tool, this.called))
      .sort((a, b) => b.tokens - a.tokens || a.tool.localeCompare(b.tool));
    const { requests, uncounted, scaledRequests } = this;
    const unusedSkills = [...this.session]
      .filter(
        ([source]) => source.startsWith(SKILL_INDEX) && !this.session.has(`skill:${source.slice(SKILL_INDEX.length)}`),
      )
      .map(([source, tokens]) => ({
        skill: source.slice(SKILL_INDEX.length),
        requests: this.carried.get(source)!,
        tokens,
      }))
      .sort((a, b) => b.tokens - a.tokens || a.skill.localeCompare(b.skill));
    return {
      requests,
      lastSeq: last?.seq ?? null,
      firstSeq: first?.seq ?? null,
      dominant: last ? dominantSource(last) : null,
      sources,
      unused,
      unusedSkills,
      uncounted,
      scaledRequests,
    };
  }
}

export function contextSummary(records: Iterable<RequestRecord>): ContextSummary {
  const tally = new ContextTally();
  for (const record of records) tally.add(record);
  return tally.summary();
}
