import type { EventHandler, RuntimeEventName, RuntimeEvents } from "./types.js";

/** Typed events; handlers run in subscription order and are awaited, so a logger sees a strict order. */
export class EventBus {
  private readonly handlers = new Map<RuntimeEventName, EventHandler<RuntimeEventName>[]>();

  on<K extends RuntimeEventName>(event: K, handler: EventHandler<K>): void {
    const list = this.handlers.get(event) ?? [];
    list.push(handler as EventHandler<RuntimeEventName>);
    this.handlers.set(event, list);
  }

  async emit<K extends RuntimeEventName>(event: K, payload: RuntimeEvents[K]): Promise<void> {
    for (const handler of this.handlers.get(event) ?? []) await handler(payload);
  }
}
