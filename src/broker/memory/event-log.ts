import type { NodeEvent } from '../../events/node-event.js';
import type { EventPage } from '../types.js';

/**
 * memory://'s events stream: entries (the events of one write) with
 * increasing ids, the oldest dropped past `maxLen` entries, as Redis's capped
 * stream. Positions are entry ids as decimal strings ('0': before any).
 */
export class EventLog {
  private entries: { id: number; events: readonly NodeEvent[] }[] = [];
  private nextId = 1;
  private readonly listeners = new Set<() => void>();

  append(events: readonly NodeEvent[], maxLen: number): void {
    if (events.length === 0) return;
    // Deep copies (an error, a progress value): a writer's objects must not change what readers see.
    this.entries.push({ id: this.nextId++, events: events.map((e) => structuredClone(e)) });
    if (this.entries.length > maxLen) this.entries.splice(0, this.entries.length - maxLen);
    for (const listener of [...this.listeners]) listener();
  }

  recent(count: number): EventPage {
    // Back to the first entry needed, then forward: no array shifted per entry.
    let from = this.entries.length;
    for (let n = 0; from > 0 && n < count;)
      n += (this.entries[--from] as { events: readonly NodeEvent[] }).events.length;
    const out = this.entries.slice(from).flatMap((e) => e.events);
    const last = this.entries[this.entries.length - 1];
    // Deep copies, as after()'s: what one reader does to its events no other sees.
    const events = out.slice(Math.max(0, out.length - count)).map((ev) => structuredClone(ev));
    return { events, position: String(last?.id ?? 0) };
  }

  /** Entries after `position`; undefined when there are none (so a blocked read goes on waiting). */
  after(position: string): EventPage | undefined {
    const from = Number(position);
    const after = this.entries.filter((e) => e.id > (Number.isFinite(from) ? from : 0));
    if (after.length === 0) return undefined;
    return {
      events: after.flatMap((e) => e.events.map((ev) => structuredClone(ev))),
      position: String((after[after.length - 1] as { id: number }).id),
    };
  }

  onAppend(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
