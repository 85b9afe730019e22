/**
 * A node's paused queues (NodePauses) follow the broker's rules, and the
 * ControlHandler checks pause/resume arguments: a bad one replies ok: false
 * naming it, and nothing changes.
 */
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { ControlHandler, type ControlTarget } from '../../../dist/cluster/control.js';
import { NodePauses } from '../../../dist/cluster/pauses.js';
import type { BrokerControl, ControlReply, ControlRequest } from '../../../dist/broker/types.js';

const silent = pino({ level: 'silent' });

describe('NodePauses', () => {
  it('keeps the pauses on every node and its own, and resumes as the broker does', () => {
    let changes = 0;
    const p = new NodePauses('me', () => changes++);
    p.load([{ queue: 'a' }, { queue: 'b', node: 'me' }, { queue: 'c', node: 'other' }]);
    expect(p.queues).toEqual(['a', 'b']);
    expect(p.has('c')).toBe(false);
    // A resume on this node leaves the pause on every node.
    p.pause('b', 'all');
    p.resume('b', 'node');
    expect(p.has('b')).toBe(true);
    p.resume('b', 'all');
    expect(p.has('b')).toBe(false);
    // A resume everywhere lifts this node's own pause too.
    p.pause('d', 'node');
    p.resume('d', 'all');
    expect(p.queues).toEqual(['a']);
    p.quiet();
    expect([p.isQuiet, p.has('anything')]).toEqual([true, true]);
    expect(changes).toBe(7);
  });

  it('a load that finds the pauses it follows changes nothing (a read again after a beat wakes no fetch)', () => {
    let changes = 0;
    const p = new NodePauses('me', () => changes++);
    p.load([]);
    expect(changes).toBe(0);
    p.load([{ queue: 'a' }, { queue: 'b', node: 'me' }]);
    p.load([{ queue: 'b', node: 'me' }, { queue: 'a' }, { queue: 'c', node: 'other' }]);
    expect(changes).toBe(1);
    // The same queue, now paused on this node only: a change.
    p.load([
      { queue: 'a', node: 'me' },
      { queue: 'b', node: 'me' },
    ]);
    expect(changes).toBe(2);
    expect(p.queues).toEqual(['a', 'b']);
  });
});

describe('ControlHandler: pause and resume', () => {
  function handler(): { run: (r: ControlRequest) => Promise<ControlReply>; calls: unknown[][] } {
    const calls: unknown[][] = [];
    const target = {
      name: 'n@h',
      nodeId: () => 'n-1',
      stats: () => ({}),
      pause: (queue: string, scope: string) => calls.push(['pause', queue, scope]),
      resume: (queue: string, scope: string) => calls.push(['resume', queue, scope]),
    } as unknown as ControlTarget;
    const replies: ControlReply[] = [];
    const broker = {
      replyControl: (_id: string, reply: ControlReply) => (replies.push(reply), Promise.resolve()),
    } as unknown as BrokerControl;
    const h = new ControlHandler(broker, target, silent);
    return {
      calls,
      run: async (r) => {
        h.handle([r]);
        await new Promise((resolve) => setImmediate(resolve));
        return replies.at(-1)!;
      },
    };
  }

  it('runs a good request, and refuses a bad queue or scope naming it', async () => {
    const { run, calls } = handler();
    expect(await run({ id: '1', command: 'pause', args: ['q', 'all'] })).toMatchObject({ ok: true });
    expect(await run({ id: '2', command: 'resume', args: ['q', 'node'] })).toMatchObject({ ok: true });
    expect((await run({ id: '3', command: 'pause', args: ['a b', 'all'] })).error).toMatch(
      /invalid option queue: "a b"/,
    );
    expect((await run({ id: '4', command: 'pause', args: [7, 'all'] })).error).toMatch(/invalid option queue: 7/);
    expect((await run({ id: '5', command: 'resume', args: ['q', 'everywhere'] })).error).toMatch(
      /control resume: invalid option scope: "everywhere" \(expected 'all' or 'node'\)/,
    );
    expect((await run({ id: '6', command: 'pause', args: [] })).ok).toBe(false);
    expect(calls).toEqual([
      ['pause', 'q', 'all'],
      ['resume', 'q', 'node'],
    ]);
  });
});
