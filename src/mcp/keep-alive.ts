/**
 * `lifecycle: "keep-alive"`: a connected server is pinged on a fixed interval, and one that dies or
 * stops answering is reconnected in the background — no model call needed — with a delay that
 * doubles after each failed attempt, up to a ceiling.
 */

export interface KeepAliveTimings {
  healthCheckMs: number;
  reconnectMinMs: number;
  reconnectMaxMs: number;
}

/** Health check every 30 s; reconnect backoff 30 s → 5 min. */
export const KEEP_ALIVE_TIMINGS: KeepAliveTimings = {
  healthCheckMs: 30_000,
  reconnectMinMs: 30_000,
  reconnectMaxMs: 300_000,
};

export interface KeepAliveHooks {
  /** Rejects when the server does not answer a ping. */
  ping(server: string): Promise<void>;
  /** Closes a connection that failed its health check. */
  drop(server: string, error: unknown): Promise<void>;
  /** Rejects when the server could not be connected. */
  reconnect(server: string): Promise<void>;
  log(type: string, data: Record<string, unknown>): void;
}

export class KeepAlive {
  private readonly healthTimers = new Map<string, NodeJS.Timeout>();
  private readonly reconnectTimers = new Map<string, NodeJS.Timeout>();
  /** The next reconnect delay of a server whose last attempt failed. */
  private readonly delays = new Map<string, number>();
  private readonly checking = new Set<string>();
  private stopped = false;

  constructor(
    private readonly timings: KeepAliveTimings,
    private readonly hooks: KeepAliveHooks,
  ) {}

  /** The server is up: check it from now on, and start its backoff over. */
  connected(server: string): void {
    this.delays.delete(server);
    clearInterval(this.healthTimers.get(server));
    const timer = setInterval(() => void this.check(server), this.timings.healthCheckMs);
    timer.unref();
    this.healthTimers.set(server, timer);
  }

  /** The server went away without being asked to: reconnect it after the current delay. */
  lost(server: string): void {
    clearInterval(this.healthTimers.get(server));
    this.healthTimers.delete(server);
    if (this.stopped || this.reconnectTimers.has(server)) return;
    const delay = this.delays.get(server) ?? this.timings.reconnectMinMs;
    this.hooks.log("mcp_reconnect_scheduled", { server, inMs: delay });
    const timer = setTimeout(() => {
      this.reconnectTimers.delete(server);
      this.hooks.reconnect(server).catch(() => {
        this.delays.set(server, Math.min(delay * 2, this.timings.reconnectMaxMs));
        this.lost(server);
      });
    }, delay);
    timer.unref();
    this.reconnectTimers.set(server, timer);
  }

  /** At shutdown: no more checks, no more reconnects. */
  stop(): void {
    this.stopped = true;
    for (const timer of this.healthTimers.values()) clearInterval(timer);
    for (const timer of this.reconnectTimers.values()) clearTimeout(timer);
    this.healthTimers.clear();
    this.reconnectTimers.clear();
  }

  private async check(server: string): Promise<void> {
    // A ping slower than the interval must not stack up a second one.
    if (this.checking.has(server)) return;
    this.checking.add(server);
    try {
      await this.hooks.ping(server);
    } catch (error) {
      // A ping still in flight when shutdown closed its connection failed because of the shutdown,
      // not the server: it must not log a failed check and a second disconnect after it.
      if (this.stopped) return;
      await this.hooks.drop(server, error);
      this.lost(server);
    } finally {
      this.checking.delete(server);
    }
  }
}
