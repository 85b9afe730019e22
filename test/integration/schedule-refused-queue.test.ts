/**
 * A schedule entry whose queue Redis refuses (its key holds another type:
 * another program wrote it) cannot enqueue its ticks' jobs. Its claim is
 * refused on its own, with the key named in the node's log, and the node's
 * other entries, claimed in the same call, fire on; the refused entry keeps
 * its latest tick, so once the key is fixed its missed ticks follow its
 * misfire rule. Before, the whole call failed on every try: the entries
 * claimed after it in the call never fired again.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { defineSchedule } from 'prefork';
import { captureLog, cleanup, makeWorker } from '../helpers/worker.js';
import { Scope } from './redis-helpers.js';

afterEach(cleanup);

const scopes: Scope[] = [];
afterEach(async () => {
  await Promise.all(scopes.splice(0).map((s) => s.cleanup()));
});

describe('a schedule entry whose queue key holds another type', () => {
  it('is refused alone: the other entries fire, and it fires once its queue is fixed', async () => {
    const scope = new Scope();
    scopes.push(scope);
    const broker = await scope.broker();
    // Claimed first: the refused entry comes before the others in the node's call.
    const schedule = defineSchedule({
      refused: { task: 'add', args: [1, 2], every: '1s', options: { queue: 'taken' } },
      fine: { task: 'add', args: [3, 4], every: '1s', options: { queue: 'nobody' } },
      alsoFine: { task: 'add', args: [5, 6], every: '1s', options: { queue: 'nobody' } },
    });
    await scope.raw.set(scope.key('q:taken'), 'written by another program');
    const { log, lines } = captureLog();
    await makeWorker({ broker: scope.url, namespace: scope.ns, concurrency: 1, schedule, logger: log }).start();
    const fired = async (): Promise<string[]> =>
      (await broker.listSchedule()).filter((s) => s.lastJobId !== undefined).map((s) => s.name);
    await expect.poll(fired, { timeout: 30_000 }).toEqual(['alsoFine', 'fine']);
    await expect
      .poll(() => lines.some((l) => l.entry === 'refused' && String(l.msg).includes(scope.key('q:taken'))), {
        timeout: 30_000,
      })
      .toBe(true);
    // Fixed: the entry fires.
    await scope.raw.del(scope.key('q:taken'));
    await expect.poll(fired, { timeout: 30_000 }).toEqual(['alsoFine', 'fine', 'refused']);
  });
});
