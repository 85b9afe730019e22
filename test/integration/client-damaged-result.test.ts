/**
 * A Client waiting for several jobs, one of whose stored results is damaged
 * (bytes another program wrote at its key): that wait fails with the
 * broker's refusal naming the key, and the client's other waits carry on.
 * One value that does not decode must not fail, or stall, the reads it
 * shares a call with.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { BrokerRefusedError, Client } from 'prefork';
import { fetchFrom, log, registerNode, result, Scope } from './redis-helpers.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('Client: a damaged stored result among the waits', () => {
  it('fails that wait naming the key; the others get their results', async () => {
    const scope = new Scope();
    cleanups.push(() => scope.cleanup());
    const client = new Client({ broker: await scope.broker(), logger: log });
    cleanups.push(() => client.close());
    const node = await scope.broker();
    await registerNode(node, 'n', ['default']);
    // Parked where no node fetches: only its damaged result is ever read.
    const damaged = await client.enqueue('add', [], { queue: 'parked' });
    const fine = await client.enqueue('add', []);
    // 0xc1 is a byte msgpack never uses: it decodes to no record.
    await scope.raw.set(`${scope.ns}:res:${damaged.id}`, Buffer.from([0xc1]));
    const failing = damaged.result({ timeout: '20s' }).catch((err: unknown) => err);
    const waiting = fine.result({ timeout: '20s' });
    waiting.catch(() => undefined);
    // The waits skipped their first look (just enqueued): a slice later they read the stored results.
    const err = await failing;
    expect(err).toBeInstanceOf(BrokerRefusedError);
    expect((err as Error).message).toContain(`the result stored at ${scope.ns}:res:${damaged.id} `);
    const reply = await fetchFrom(node, 'n', ['default'], 1);
    await node.settle(
      reply.deliveries.map((d) => ({ kind: 'ack' as const, delivery: d, result: result(d, 'SUCCESS', 5) })),
    );
    expect(await waiting).toBe(5);
  });
});
