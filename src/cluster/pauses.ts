import type { PausedQueue } from '../broker/types.js';

/** Where a pause applies: on every node, or on the nodes a request was addressed to. */
export type PauseScope = 'all' | 'node';

/**
 * The queues this node does not fetch from: paused on every node, paused on
 * this node alone (both remembered in the broker, `prefork control pause`),
 * or every queue once the node is quiet (SIGTSTP, this process only).
 */
export class NodePauses {
  private readonly everywhere = new Set<string>();
  private readonly here = new Set<string>();
  private quietFlag = false;

  /** `changed` runs after every change that may start or stop a queue (the Consumer looks again). */
  constructor(
    private readonly nodeName: string,
    private readonly changed: () => void,
  ) {}

  /** The pauses as the broker remembers them (at registration): those of other nodes are left out. */
  load(pauses: readonly PausedQueue[]): void {
    this.everywhere.clear();
    this.here.clear();
    for (const p of pauses) {
      if (p.node === undefined) this.everywhere.add(p.queue);
      else if (p.node === this.nodeName) this.here.add(p.queue);
    }
    this.changed();
  }

  pause(queue: string, scope: PauseScope): void {
    (scope === 'all' ? this.everywhere : this.here).add(queue);
    this.changed();
  }

  /** As the broker's resumeQueue: everywhere lifts both pauses, a node's own leaves the pause on every node. */
  resume(queue: string, scope: PauseScope): void {
    if (scope === 'all') this.everywhere.delete(queue);
    this.here.delete(queue);
    this.changed();
  }

  /** Stop fetching from every queue for good (SIGTSTP); jobs held run on. */
  quiet(): void {
    this.quietFlag = true;
    this.changed();
  }

  get isQuiet(): boolean {
    return this.quietFlag;
  }

  has(queue: string): boolean {
    return this.quietFlag || this.everywhere.has(queue) || this.here.has(queue);
  }

  /** The queues paused here by a pause (everywhere or this node's), sorted. */
  get queues(): string[] {
    return [...new Set([...this.everywhere, ...this.here])].sort();
  }
}
