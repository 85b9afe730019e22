/**
 * Control requests and the heartbeat's membership duties through the Broker
 * interface, over both implementations (memory:// and Redis): a request
 * reaches a live node with its next heartbeat, once; replies are collected
 * by request id; dead or unknown nodes are not posted to; a heartbeat names
 * the next lease to expire so a dead node is recovered on time.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ControlRequest } from '../../dist/broker/types.js';
import { MIN_LEASE_MS } from '../../dist/broker/broker-options.js';
import { eachBrokerScope } from '../helpers/broker-scope.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe.each(['memory', 'redis'] as const)('control over %s', (kind) => {
  const { broker, node } = eachBrokerScope(kind, 'control');

  const request = (command: ControlRequest['command'], args: number[] = []): ControlRequest => ({
    id: randomUUID(),
    command,
    args,
  });

  it('a heartbeat hands a live node its requests once; nothing is handed when nothing waits', async () => {
    const b = await broker();
    const [n1, n2] = [await node(b, 'n1'), await node(b, 'n2')];
    expect((await b.heartbeat(n1, ['q'])).control ?? []).toEqual([]);
    const grow = request('grow', [2]);
    const ping = request('ping');
    expect(await b.sendControl([n1], grow, 10_000)).toEqual([n1]);
    expect(await b.sendControl([n1, n2], ping, 10_000)).toEqual([n1, n2]);
    expect((await b.heartbeat(n1, ['q'])).control).toEqual([grow, ping]);
    expect((await b.heartbeat(n1, ['q'])).control ?? []).toEqual([]);
    expect((await b.heartbeat(n2, ['q'])).control).toEqual([ping]);
    // Taken out of band, a request is not handed again by the heartbeat.
    const stats = request('stats');
    await b.sendControl([n2], stats, 10_000);
    expect(await b.takeControl(n2)).toEqual([stats]);
    expect((await b.heartbeat(n2, ['q'])).control ?? []).toEqual([]);
  });

  it('requests are not posted to unknown or expired nodes, and a request not taken within its ttl is dropped', async () => {
    const short = await broker({ leaseMs: MIN_LEASE_MS });
    const long = await broker({ leaseMs: 60_000 });
    await node(short, 'gone');
    await node(long, 'alive');
    await sleep(MIN_LEASE_MS + 150);
    expect(await long.sendControl(['gone', 'nobody', 'alive'], request('ping'), 10_000)).toEqual(['alive']);
    expect((await long.heartbeat('alive', ['q'])).control).toHaveLength(1);
    await long.sendControl(['alive'], request('ping'), 50);
    await sleep(150);
    expect((await long.heartbeat('alive', ['q'])).control ?? []).toEqual([]);
  });

  it('a beat says requests were posted since the last one, also when they lapsed or were taken out of band', async () => {
    const b = await broker({ leaseMs: 60_000 });
    const [n1, n2] = [await node(b, 'n1'), await node(b, 'n2')];
    expect((await b.heartbeat(n1, ['q'])).controlPosted ?? false).toBe(false);
    // Lapsed untaken (the node stalled past the sender's timeout): what it said is lost, so the beat says so.
    await b.sendControl([n1], request('ping'), 1);
    await sleep(20);
    const lapsed = await b.heartbeat(n1, ['q']);
    expect(lapsed.control ?? []).toEqual([]);
    expect(lapsed.controlPosted).toBe(true);
    expect((await b.heartbeat(n1, ['q'])).controlPosted ?? false).toBe(false);
    await b.sendControl([n2], request('stats'), 10_000);
    expect(await b.takeControl(n2)).toHaveLength(1);
    expect((await b.heartbeat(n1, ['q'])).controlPosted ?? false).toBe(false);
    expect((await b.heartbeat(n2, ['q'])).controlPosted).toBe(true);
  });

  it('a pause, resume or rate stored flags every live node, so its next beat reads them though no request came', async () => {
    const b = await broker({ leaseMs: 60_000 });
    const [n1, n2] = [await node(b, 'n1'), await node(b, 'n2')];
    const beats = async (): Promise<boolean[]> =>
      Promise.all([n1, n2].map(async (n) => (await b.heartbeat(n, ['q'])).controlPosted ?? false));
    expect(await beats()).toEqual([false, false]);
    expect(await b.pauseQueue('q')).toBe(true);
    expect(await beats()).toEqual([true, true]);
    // Nothing changed: nothing to read again.
    expect(await b.pauseQueue('q')).toBe(false);
    expect(await beats()).toEqual([false, false]);
    expect(await b.resumeQueue('q')).toBe(1);
    expect(await beats()).toEqual([true, true]);
    expect(await b.resumeQueue('q')).toBe(0);
    expect(await beats()).toEqual([false, false]);
    await b.setRateLimit('work', '1/s');
    expect(await beats()).toEqual([true, true]);
    await b.setRateLimit('work', 'default');
    expect(await beats()).toEqual([true, true]);
    expect(await b.rateLimits()).toEqual(new Map());
    await b.setRateLimit('work', 'default');
    expect(await beats()).toEqual([false, false]);
  });

  it('a request past its own ttl is dropped though a later one to the same node is still waiting', async () => {
    const b = await broker({ leaseMs: 60_000 });
    await node(b, 'stopped');
    // The sender of `grow` gave up (its ttl, the CLI's --timeout) and said so: the node must not grow later.
    const grow = request('grow', [2]);
    await b.sendControl(['stopped'], grow, 50);
    const ping = request('ping');
    await b.sendControl(['stopped'], ping, 10_000);
    await sleep(150);
    expect((await b.heartbeat('stopped', ['q'])).control).toEqual([ping]);
    const stale = request('shrink', [1]);
    await b.sendControl(['stopped'], stale, 50);
    const stats = request('stats');
    await b.sendControl(['stopped'], stats, 10_000);
    await sleep(150);
    expect(await b.takeControl('stopped')).toEqual([stats]);
  });

  it('watchControl announces the node a request was posted to (only posted ones), until unwatched', async () => {
    const b = await broker();
    const sender = await broker();
    await node(b, 'w1');
    const woken: string[] = [];
    const unwatch = await b.watchControl((id) => woken.push(id));
    expect(await sender.sendControl(['w1', 'nobody'], request('ping'), 10_000)).toEqual(['w1']);
    await expect.poll(() => woken).toEqual(['w1']);
    expect(await b.takeControl('w1')).toHaveLength(1);
    await unwatch();
    await sender.sendControl(['w1'], request('ping'), 10_000);
    await sleep(100);
    expect(woken).toEqual(['w1']);
  });

  it('replies are collected by request id, up to the count asked; a wait with none returns what came', async () => {
    const b = await broker();
    const id = randomUUID();
    const waiting = b.waitForControlReplies(id, 2, 10_000);
    await b.replyControl(id, { node: 'a', nodeId: 'a#1', ok: true, value: { pid: 1 } });
    await b.replyControl(randomUUID(), { node: 'x', nodeId: 'x#1', ok: true });
    await b.replyControl(id, { node: 'b', nodeId: 'b#1', ok: false, error: 'no autoscale' });
    expect(await waiting).toEqual([
      { node: 'a', nodeId: 'a#1', ok: true, value: { pid: 1 } },
      { node: 'b', nodeId: 'b#1', ok: false, error: 'no autoscale' },
    ]);
    expect(await b.waitForControlReplies(randomUUID(), 1, 100)).toEqual([]);
  });

  it("a heartbeat names the next lease of another node to expire (on this process's clock)", async () => {
    const short = await broker({ leaseMs: 5_000 });
    const long = await broker({ leaseMs: 60_000 });
    await node(long, 'me');
    expect((await long.heartbeat('me', ['q'])).nextExpiryAt).toBeUndefined();
    await node(short, 'other');
    const before = Date.now();
    const beat = await long.heartbeat('me', ['q']);
    // Within the other node's lease from now, give or take the round trip (the conversion's error).
    expect(beat.nextExpiryAt! - before).toBeGreaterThan(0);
    expect(beat.nextExpiryAt! - Date.now()).toBeLessThanOrEqual(5_000 + 50);
  });

  it('a node listed by listNodes is a live one: an expired lease drops out of the listing', async () => {
    const short = await broker({ leaseMs: MIN_LEASE_MS });
    const long = await broker({ leaseMs: 60_000 });
    await node(short, 'gone');
    await node(long, 'alive');
    expect((await long.listNodes()).map((n) => n.id).sort()).toEqual(['alive', 'gone']);
    await sleep(MIN_LEASE_MS + 150);
    expect((await long.listNodes()).map((n) => n.id)).toEqual(['alive']);
  });
});
