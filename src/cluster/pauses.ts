import type { PausedQueue } from '../broker/types.js';

/** Where a pause applies: on every node, or on the nodes a request was addressed to. */
export type PauseScope = 'all' | 'node';

/**
 * The queues this node does not fetch from: paused on every node, paused on
 * this node alone (both remembered in the broker, `prefork control pause`),
 * or every queue once the node is quiet (SIGTSTP, this process only).
 */
export class NodePauses {
  private everywhere = new Set<string>();
  private here = new Set<string>();
  private quietFlag = false;

  /** `changed` runs after every change that may start or stop a queue (the Consumer looks again). */
  constructor(
    private readonly nodeName: string,
    private readonly changed: () => void,
  ) {}

  /**
   * The pauses as the broker remembers them (at registration, or read
   * again after a beat): those of other nodes are left out. `changed` runs
   * only if they differ from the ones followed (a read again mostly finds
   * nothing new, and would end a blocking wait for nothing).
   */
  load(pauses: readonly PausedQueue[]): void {
    const everywhere = new Set<string>();
    const here = new Set<string>();
    for (const p of pauses) {
      if (p.node === undefined) everywhere.add(p.queue);
      else if (p.node === this.nodeName) here.add(p.queue);
    }
    if (sameSet(everywhere, this.everywhere) && sameSet(here, this.here)) return;
    this.everywhere = everywhere;
    this.here = here;
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

function sameSet(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  return a.size === b.size && [...a].every((x) => b.has(x));
}
