import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";

/**
 * A transport started before its client connects: the server's process starts now, while the agent
 * does other work, and the client finds it running when it connects. Until then nothing is sent to
 * the server, and what the process says (a message, an error, its exit) is held and handed to the
 * client's handlers when it starts the transport, in the order it came. So the client sees exactly
 * what it would have seen from a transport it started itself, only sooner.
 */
export class EarlyStartedTransport implements Transport {
  onmessage?: Transport["onmessage"];
  onerror?: Transport["onerror"];
  onclose?: Transport["onclose"];
  private readonly held: (() => void)[] = [];
  private attached = false;
  private readonly started: Promise<void>;

  constructor(private readonly inner: Transport) {
    inner.onmessage = (message, extra) => this.deliver(() => this.onmessage?.(message, extra));
    inner.onerror = (error) => this.deliver(() => this.onerror?.(error));
    inner.onclose = () => this.deliver(() => this.onclose?.());
    this.started = inner.start();
    // The failure reaches the client through start(); until then it must not count as unhandled.
    this.started.catch(() => undefined);
  }

  private deliver(event: () => void): void {
    if (this.attached) event();
    else this.held.push(event);
  }

  async start(): Promise<void> {
    try {
      await this.started;
    } finally {
      this.attached = true;
      for (const event of this.held.splice(0)) event();
    }
  }

  send(...args: Parameters<Transport["send"]>): Promise<void> {
    return this.inner.send(...args);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  /** The server process's id, as the SDK's stdio transport gives it; null once it is gone or for another kind. */
  get pid(): number | null {
    return processId(this.inner);
  }
}

/** The id of the process behind a stdio transport (the SDK's, or one started early); null for any other. */
export function processId(transport: Transport | undefined): number | null {
  const pid = (transport as { pid?: unknown } | undefined)?.pid;
  return typeof pid === "number" ? pid : null;
}
