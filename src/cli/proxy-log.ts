import { providerSummary } from "../analysis/cache-agreement.js";
import type { FinishedExchange } from "../capture/capture.js";
import { requestFailure } from "../capture/request-failure.js";
import { printable } from "../text/terminal-text.js";

/**
 * The request's conversation and what it read from the provider's cache, against the earlier request
 * it read from (capture/cache-reader.ts): kept, broken (where, why), a new conversation, or nothing.
 */
function prefixText(record: NonNullable<FinishedExchange["record"]>): string {
  const p = record.prefix;
  const conversation = record.conversation ? `${record.conversation.id} ${record.conversation.role} ` : "";
  if (p === null) return `${conversation}prefix -`;
  const from = typeof p.from === "number" ? ` from #${p.from}` : "";
  if (p.newConversation)
    return `${conversation}new conversation${p.sharedBytes > 0 ? ` (${p.sharedBytes} B${from})` : ""}`;
  if (p.from === null) return `${conversation}prefix not cached`;
  if (p.breakAt === null)
    return `${conversation}prefix ${p.sharedBytes === 0 ? "first" : `kept ${p.sharedBytes} B${from}`}`;
  const against = typeof p.from === "number" ? ` vs #${p.from}` : "";
  return `${conversation}prefix broke${against} at ${p.breakDetail ?? p.breakAt}`;
}

const pathOf = (url: string) => new URL(url).pathname;

/** One line per finished exchange, for stderr while the proxy runs; what the agent sent is made printable. */
export function exchangeLine(exchange: FinishedExchange): string {
  return printable(exchangeText(exchange));
}

/** `status 200`, `status none failed (upstream … failed: getaddrinfo ENOTFOUND …)`, `status 429 (HTTP 429: …)`. */
function statusText({ outcome, record }: FinishedExchange): string {
  const status = `status ${outcome.status ?? "none"}${outcome.ending === "complete" ? "" : ` ${outcome.ending}`}`;
  // A side payload's error body is not read (the line says why it is a side payload); a lost connection is.
  const failure =
    record === null && outcome.status !== null
      ? null
      : requestFailure({ ...outcome, error: record?.error ?? outcome.error ?? null });
  return failure === null ? status : `${status} (${failure})`;
}

function exchangeText(exchange: FinishedExchange): string {
  const { seq, request, record } = exchange;
  const status = statusText(exchange);
  if (record === null) {
    const why = request.unreadable
      ? `unreadable: ${request.unreadable}`
      : request.websocket
        ? "WebSocket warm-up: nothing generated"
        : "no wire API";
    return `#${seq} side ${pathOf(request.url)} ${status} (${why})`;
  }
  const tokens = record.tokens === null ? "" : ` tokens ${record.tokens.total}`;
  const provider = record.cacheDiagnostics ? `; ${providerSummary(record)}` : "";
  return `#${seq} ${record.api} ${record.model || "-"} tools ${record.tools.length}${tokens} ${status} ${prefixText(record)}${provider}`;
}

/** Counts of a proxy session, for the summary printed when it stops. */
class ProxyTally {
  /** `label` starts the summary: the command that served the requests (`proxy`, `mock`). */
  constructor(private readonly label = "proxy") {}

  private requests = 0;
  private side = 0;
  private tokens = 0;
  private breaks = 0;
  private readonly conversations = new Map<string, number>();
  private readonly byApi = new Map<string, number>();
  private readonly byStatus = new Map<string, number>();

  add(exchange: FinishedExchange): void {
    this.requests++;
    const status = String(exchange.outcome.status ?? exchange.outcome.ending);
    this.byStatus.set(status, (this.byStatus.get(status) ?? 0) + 1);
    const record = exchange.record;
    if (record === null) {
      this.side++;
      return;
    }
    this.byApi.set(record.api, (this.byApi.get(record.api) ?? 0) + 1);
    this.tokens += record.tokens?.total ?? 0;
    if (record.prefix?.breakAt) this.breaks++;
    if (record.conversation) {
      const { id, role } = record.conversation;
      this.conversations.set(`${id} ${role}`, (this.conversations.get(`${id} ${role}`) ?? 0) + 1);
    }
  }

  summary(): string {
    const list = (counts: Map<string, number>, join: string) =>
      [...counts].map(([name, n]) => `${name}${join}${n}`).join(", ");
    const apis = this.byApi.size > 0 ? ` (${list(this.byApi, " ")})` : "";
    const statuses = this.byStatus.size > 0 ? `; status ${list(this.byStatus, "×")}` : "";
    return (
      `${this.label}: ${this.requests} request(s): ${this.requests - this.side} recorded${apis}, ${this.side} side` +
      `${statuses}; ${this.tokens} tokens by our count; prefix broke ${this.breaks} time(s)` +
      (this.conversations.size > 0 ? `; conversations ${list(this.conversations, " ×")}` : "")
    );
  }
}

/**
 * The live log of a command serving an agent (proxy, mock, record), a part of its capture session
 * (capture/capture-session.ts): one stderr line per finished exchange (unless `lines` is false:
 * record's command may own the terminal), and the summary once the capture has closed.
 */
export function exchangeLog(label: string, lines = true) {
  const tally = new ProxyTally(label);
  return {
    onFinished(exchange: FinishedExchange): void {
      tally.add(exchange);
      if (lines) process.stderr.write(`${exchangeLine(exchange)}\n`);
    },
    close: () => {
      process.stderr.write(`${tally.summary()}\n`);
    },
  };
}
