/**
 * Task names, error names and queue names that are Object.prototype keys
 * (`toString`, `constructor`, `__proto__`, `hasOwnProperty`, `valueOf`) are
 * data like any other: every job runs and settles, every error comes back
 * with its own name, and the node keeps serving (a lookup on a plain object
 * used to throw in the parent, whose child was then killed with the job
 * already off its in-flight list: the job never settled and the node wedged).
 */
import { afterEach, describe, expect, inject, it } from 'vitest';
import { RemoteTaskError } from 'prefork';
import { fixture, startPool, terminatePools } from '../helpers/pool.js';
import { cleanup, makeClient, makeWorker, uniqueName } from '../helpers/worker.js';

const KEYS = ['toString', 'constructor', '__proto__', 'hasOwnProperty', 'valueOf'];
const APP = fixture('tasks-prototype-names.mjs');

afterEach(async () => {
  await terminatePools();
  await cleanup();
});

/** Every task once with each error name: 25 failing jobs. */
const failing = KEYS.flatMap((task) => KEYS.map((errorName) => ({ task, errorName })));

function expectTaskError(err: unknown, task: string, errorName: string): void {
  expect(err).toBeInstanceOf(RemoteTaskError);
  const e = err as RemoteTaskError;
  expect(e.name).toBe(errorName);
  expect(e.message).toBe(`${task} threw ${errorName}`);
  expect(e.task).toBe(task);
}

describe('names that are Object.prototype keys', () => {
  it('through the Pool (2 children): each task runs, each error comes back with its name, later jobs run, close() ends', async () => {
    const pool = await startPool({ app: APP, processes: 2 });
    expect([...pool.taskNames].sort()).toEqual([...KEYS, 'plain'].sort());

    expect(await Promise.all(KEYS.map((task) => pool.apply(task, ['ok'])))).toEqual(KEYS.map((t) => `${t} ran`));
    const errors = await Promise.all(
      failing.map(({ task, errorName }) =>
        pool.apply(task, ['throw', errorName]).then(
          () => undefined,
          (e: unknown) => e,
        ),
      ),
    );
    failing.forEach(({ task, errorName }, i) => expectTaskError(errors[i], task, errorName));

    const later = await Promise.all(Array.from({ length: 20 }, () => pool.apply('plain')));
    expect(later).toEqual(Array.from({ length: 20 }, () => 'plain ran'));
    // No child was killed over a name.
    expect(pool.stats().totals).toMatchObject({ failed: failing.length, lost: 0, restarts: 0 });
    // Task options are looked up by name: only the declared ones exist.
    expect(pool.taskOptions('constructor')).toEqual({ retries: 0 });
    expect(pool.taskOptions('__proto__')).toEqual({ retries: 0 });
    expect(pool.taskOptions('toString')).toBeUndefined();
    expect(pool.taskOptions('hasOwnProperty')).toBeUndefined();
    await pool.close();
  });

  it('through a Worker on Redis (2 children, queues named by the keys): every job settles, the Client gets each error with its name, a warm stop ends', async () => {
    const url = inject('redisUrl');
    const namespace = uniqueName('ns');
    const worker = makeWorker({ broker: url, namespace, app: APP, concurrency: 2, queues: KEYS.join(',') });
    await worker.start();
    const client = makeClient(url, namespace);

    const ok = await client.enqueueMany(KEYS.map((task) => ({ name: task, args: ['ok'], options: { queue: task } })));
    const bad = await client.enqueueMany(
      failing.map(({ task, errorName }) => ({ name: task, args: ['throw', errorName], options: { queue: errorName } })),
    );
    expect(await Promise.all(ok.map((job) => job.result()))).toEqual(KEYS.map((t) => `${t} ran`));
    const errors = await Promise.all(
      bad.map((job) =>
        job.result().then(
          () => undefined,
          (e: unknown) => e,
        ),
      ),
    );
    failing.forEach(({ task, errorName }, i) => expectTaskError(errors[i], task, errorName));
    const states = await Promise.all(bad.map((job) => job.state()));
    expect(states.map((s) => s?.state)).toEqual(failing.map(() => 'FAILURE'));

    const later = await client.enqueueMany(
      Array.from({ length: 20 }, (_, i) => ({ name: 'plain', options: { queue: KEYS[i % KEYS.length] } })),
    );
    expect(await Promise.all(later.map((job) => job.result()))).toEqual(Array.from({ length: 20 }, () => 'plain ran'));
    expect(worker.stats().pool.totals).toMatchObject({ lost: 0, restarts: 0 });
    await worker.stop();
  });
});
