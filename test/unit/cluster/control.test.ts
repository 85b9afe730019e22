/**
 * The ControlHandler checks each command's own arguments (control requests
 * carry strings and numbers): a bad one replies ok: false naming what was
 * wrong, and the node is not touched.
 */
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { ControlHandler, type ControlTarget } from '../../../dist/cluster/control.js';
import type { BrokerControl, ControlReply, ControlRequest, RevokeOptions } from '../../../dist/broker/types.js';

const silent = pino({ level: 'silent' });

/** A target that records what it was asked, and a broker that keeps the replies. */
function handler(): {
  run: (command: ControlRequest['command'], args: (string | number)[]) => Promise<ControlReply>;
  calls: unknown[][];
} {
  const calls: unknown[][] = [];
  const target: ControlTarget = {
    name: 'n@h',
    nodeId: () => 'n-1',
    stats: () => ({}),
    grow: (n) => calls.push(['grow', n]),
    shrink: (n) => calls.push(['shrink', n]),
    autoscale: (max, min) => calls.push(['autoscale', max, min]),
    rateLimit: (task, rate) => calls.push(['rate-limit', task, rate]),
    shutdown: () => undefined,
    jobs: (which) => calls.push(['jobs', which]),
    registered: () => calls.push(['registered']),
    revoke: (ids: string[], options: RevokeOptions, expiresAt: number) =>
      calls.push(['revoke', ids, options, expiresAt]),
    pause: (queue, scope) => calls.push(['pause', queue, scope]),
    resume: (queue, scope) => calls.push(['resume', queue, scope]),
  };
  const replies = new Map<string, (reply: ControlReply) => void>();
  const broker = {
    replyControl: (requestId: string, reply: ControlReply) => {
      replies.get(requestId)?.(reply);
      return Promise.resolve();
    },
  } as unknown as BrokerControl;
  const control = new ControlHandler(broker, target, silent);
  let seq = 0;
  return {
    calls,
    run: (command, args) =>
      new Promise((resolve) => {
        const id = `r${++seq}`;
        replies.set(id, resolve);
        control.handle([{ id, command, args }]);
      }),
  };
}

describe('ControlHandler arguments', () => {
  it('revoke passes the ids and options on', async () => {
    const { run, calls } = handler();
    expect(await run('revoke', [1, 200, 1_700_000_000_000, 'a', 'b'])).toMatchObject({ ok: true });
    expect(calls).toEqual([['revoke', ['a', 'b'], { terminate: true, grace: 200 }, 1_700_000_000_000]]);
  });

  it.each([
    ['terminate', ['yes', 200, 1, 'a'], /invalid option terminate: "yes" \(expected 0 or 1\)/],
    ['grace', [0, -1, 1, 'a'], /invalid option grace: -1/],
    ['grace', [0, '5s', 1, 'a'], /invalid option grace: "5s"/],
    ['expiresAt', [0, 200, 'soon', 'a'], /invalid option expiresAt: "soon"/],
    ['ids (none)', [0, 200, 1], /invalid option ids/],
    ['ids (a number)', [0, 200, 1, 'a', 7], /invalid option ids: 7/],
    ['ids (empty)', [0, 200, 1, ''], /invalid option ids: ""/],
  ])('revoke with a bad %s replies ok: false naming it, and revokes nothing', async (_what, args, message) => {
    const { run, calls } = handler();
    const reply = await run('revoke', args);
    expect(reply.ok).toBe(false);
    expect(reply.error).toMatch(/^control revoke: /);
    expect(reply.error).toMatch(message);
    expect(calls).toEqual([]);
  });

  it('rate-limit passes the task and the rate on', async () => {
    const { run, calls } = handler();
    expect(await run('rate-limit', ['send', '10/s'])).toMatchObject({ ok: true });
    expect(calls).toEqual([['rate-limit', 'send', '10/s']]);
  });

  it.each([
    ['task (none)', [], /invalid option task: undefined/],
    ['task (empty)', ['', '10/s'], /invalid option task: ""/],
    ['rate (a number)', ['send', 10], /invalid option rate: 10/],
  ])('rate-limit with a bad %s replies ok: false naming it, and changes nothing', async (_what, args, message) => {
    const { run, calls } = handler();
    const reply = await run('rate-limit', args);
    expect(reply.ok).toBe(false);
    expect(reply.error).toMatch(/^control rate-limit: /);
    expect(reply.error).toMatch(message);
    expect(calls).toEqual([]);
  });

  it.each([
    ['grow', ['2']],
    ['shrink', ['1']],
    ['autoscale', [4, 'one']],
  ] as const)('%s with a string where a number goes replies ok: false naming it', async (command, args) => {
    const { run, calls } = handler();
    const reply = await run(command, [...args]);
    expect(reply).toMatchObject({ ok: false });
    expect(reply.error).toMatch(
      new RegExp(`^control ${command}: invalid option args\\[\\d\\]: "\\w+" \\(expected a number\\)`),
    );
    expect(calls).toEqual([]);
  });

  it('grow, shrink and autoscale pass their numbers on', async () => {
    const { run, calls } = handler();
    await run('grow', [2]);
    await run('shrink', [1]);
    await run('autoscale', [4, 1]);
    expect(calls).toEqual([
      ['grow', 2],
      ['shrink', 1],
      ['autoscale', 4, 1],
    ]);
  });
});
