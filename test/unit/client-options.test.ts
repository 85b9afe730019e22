import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { chain, Client, group, OptionError, task, type ClientOptions, type EnqueueOptions } from 'prefork';
import type { Broker } from 'prefork/broker';

const silent = pino({ level: 'silent' });
const clients: Client[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

function client(options: Partial<ClientOptions> = {}): Client {
  const c = new Client({ broker: `memory://client-options-${randomUUID()}`, logger: silent, ...options });
  clients.push(c);
  return c;
}

/** What the broker stored for a job enqueued with `options` (read back through the broker's admin view). */
async function stored(
  c: Client,
  options: EnqueueOptions,
): Promise<{ options: Record<string, unknown>; delayed: number }> {
  await c.enqueue('t', [], { ...options, queue: 'q' });
  // A Client built from a URL holds a whole broker; it uses only the producer and results roles.
  const broker = c.broker as Broker;
  const [counts] = await broker.counts(['q']);
  await broker.register({ id: 'n', name: 'n', host: 'h', pid: 1, queues: ['q'], concurrency: '1', startedAt: 0 });
  const reply = await broker.fetch({ nodeId: 'n', plan: [{ queue: 'q', quota: 1 }], count: 1, settle: [] });
  return { options: (reply.deliveries[0]?.job.options ?? {}) as Record<string, unknown>, delayed: counts!.delayed };
}

describe('Client.enqueue options', () => {
  it.each([
    ['delay', { delay: 'soon' }, '"soon"'],
    ['delay', { delay: -1 }, '-1'],
    ['delay', { delay: Number.NaN }, 'NaN'],
    ['delay', { delay: '200y' }, '"200y"'],
    ['delay', { delay: 4e12 }, '4000000000000'],
    ['eta', { eta: new Date('nope') }, ''],
    ['eta', { eta: Number.POSITIVE_INFINITY }, 'Infinity'],
    ['eta', { eta: '2030-01-01' }, '"2030-01-01"'],
    ['retries', { retries: -1 }, '-1'],
    ['retries', { retries: 1.5 }, '1.5'],
    ['retries', { retries: '3' }, '"3"'],
    ['backoff', { backoff: 1000 }, '1000'],
    ['backoff.delay', { backoff: { delay: 'later' } }, '"later"'],
    ['backoff.cap', { backoff: { cap: -5 } }, '-5'],
    ['backoff.type', { backoff: { type: 'linear' } }, '"linear"'],
    ['backoff.jitter', { backoff: { jitter: 'yes' } }, '"yes"'],
    ['backoff.dealy', { backoff: { dealy: 10 } }, '10'],
    ['timeLimit', { timeLimit: 0 }, '0'],
    ['timeLimit', { timeLimit: '25d' }, '"25d"'],
    ['timeLimit', { timeLimit: 2 ** 31 }, String(2 ** 31)],
    ['softTimeLimit', { softTimeLimit: 'x' }, '"x"'],
    ['softTimeLimit', { timeLimit: '1s', softTimeLimit: '2s' }, '"2s"'],
    ['queue', { queue: '' }, '""'],
    ['queue', { queue: 'default:delayed' }, '"default:delayed"'],
    ['queue', { queue: 'a b' }, '"a b"'],
    ['queue', { queue: 7 }, '7'],
    ['id', { id: 42 }, '42'],
    ['ignoreResult', { ignoreResult: 'yes' }, '"yes"'],
    ['resultTtl', { resultTtl: 0 }, '0'],
    ['resultTtl', { resultTtl: 'soon' }, '"soon"'],
    ['resultTtl', { resultTtl: '200y' }, '"200y"'],
    ['resultTtl', { resultTtl: 1e20 }, '100000000000000000000'],
    // One of the two would be silently ignored.
    ['eta', { delay: 1000, eta: 4102444800000 }, '4102444800000'],
  ])('rejects a bad %s (%j) with an OptionError naming it and the value', async (option, options, shown) => {
    const err = await client()
      .enqueue('t', [], options as EnqueueOptions)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OptionError);
    expect((err as OptionError).option).toBe(option);
    expect((err as OptionError).message).toContain(`invalid option ${option}: ${shown}`);
  });

  it('new Client() refuses an unknown option, naming it (a misspelt broker would silently be the default)', () => {
    expect(() => new Client({ brokr: 'redis://elsewhere:6379', logger: silent } as never)).toThrow(
      /invalid option brokr: "redis:\/\/elsewhere:6379" \(expected a known Client option/,
    );
  });

  it('enqueues nothing when one job of a batch is bad', async () => {
    const c = client();
    await expect(
      c.enqueueMany([
        { name: 't', options: { queue: 'q' } },
        { name: 't', options: { queue: 'q', timeLimit: -1 } },
      ]),
    ).rejects.toThrow(OptionError);
    expect((await (c.broker as Broker).counts(['q']))[0]!.waiting).toBe(0);
  });

  it('stores durations given as strings in ms, backoff included', async () => {
    const { options } = await stored(client(), {
      retries: 2,
      backoff: { type: 'fixed', delay: '1.5s', cap: '1m', jitter: false },
      timeLimit: '2m',
      softTimeLimit: '90s',
    });
    expect(options).toEqual({
      retries: 2,
      backoff: { type: 'fixed', delay: 1_500, cap: 60_000, jitter: false },
      timeLimit: 120_000,
      softTimeLimit: 90_000,
    });
  });

  it("stores ignoreResult as given, false included (it wins over the task's own)", async () => {
    expect((await stored(client(), { ignoreResult: false })).options).toEqual({ ignoreResult: false });
    expect((await stored(client(), { ignoreResult: true })).options).toEqual({ ignoreResult: true });
    expect((await stored(client(), {})).options).toEqual({});
  });

  it("sends the client's resultTtl with each job that keeps results, in whole ms; an enqueue's wins", async () => {
    expect((await stored(client({ resultTtl: '2h' }), {})).options).toEqual({ resultTtl: 7_200_000 });
    expect((await stored(client({ resultTtl: '2h' }), { resultTtl: 1.4 })).options).toEqual({ resultTtl: 1 });
    expect((await stored(client(), { resultTtl: '1m' })).options).toEqual({ resultTtl: 60_000 });
    expect((await stored(client({ resultTtl: '2h' }), { ignoreResult: true })).options).toEqual({ ignoreResult: true });
    expect((await stored(client(), {})).options).toEqual({});
  });

  it('refuses a bad client resultTtl, naming it', () => {
    for (const resultTtl of [0, -1, 'soon', '200y'])
      expect(() => client({ resultTtl })).toThrow(/invalid option resultTtl/);
  });

  it('accepts a delay longer than a timer can run (it waits in the broker)', async () => {
    const { delayed } = await stored(client(), { delay: '30d' });
    expect(delayed).toBe(1);
  });

  it('rejects a result timeout a timer cannot run, naming it', async () => {
    const c = client();
    const job = await c.enqueue('t', []);
    await expect(job.result({ timeout: '30d' })).rejects.toThrow(/invalid option timeout: "30d"/);
  });

  it('rejects a misspelt result() option, naming it, rather than waiting for ever', async () => {
    const c = client();
    const job = await c.enqueue('t', []);
    await expect(job.result({ timout: 100 } as never)).rejects.toThrow(
      /invalid option timout: 100 .*unknown option "timout"/,
    );
    await expect(job.result(null as never)).rejects.toBeInstanceOf(OptionError);
  });

  it.each([[''], [5], [{}]])('handle() refuses the id %j, naming it', (id) => {
    expect(() => client().handle(id as never)).toThrow(OptionError);
    expect(() => client().handle(id as never)).toThrow(/invalid option id/);
  });
});

describe('a workflow step with a bad option', () => {
  it('is named once, with its place in the workflow', async () => {
    const c = client();
    const err = await c
      .enqueue(chain(task('t'), group([task('t'), task('t', [], { retries: -1 })])))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OptionError);
    expect((err as OptionError).message).toBe(
      'workflow > chain step 2 > group member 2: invalid option retries: -1 (expected an integer from 0 to 2^53-1)',
    );
    expect((err as OptionError).expected).toBe('an integer from 0 to 2^53-1');
  });
});

describe('the shape of what is enqueued', () => {
  it.each([[5], ['high'], [true], [[1]]])(
    'enqueue() refuses options %j that are not an object, rather than enqueueing with none',
    async (options) => {
      const c = client();
      const err = await c.enqueue('t', [], options as never).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OptionError);
      expect((err as OptionError).message).toBe(
        `invalid option options: ${JSON.stringify(options)} (expected an object of enqueue options)`,
      );
      expect((await (c.broker as Broker).counts(['default']))[0]!.waiting).toBe(0);
    },
  );

  it.each([
    // A misspelt key: the job would run without its arguments.
    [
      [
        { name: 't', args: [1] },
        { name: 't', arg: [2] },
      ],
      'enqueueMany() items[1]: invalid option arg: [2] (expected a known item key: name, args, options (unknown option "arg"))',
    ],
    [
      [{ name: 't' }, null],
      'enqueueMany() items[1]: invalid option item: null (expected an object: { name, args?, options? })',
    ],
    [
      [{ name: 't', options: 5 }],
      'enqueueMany() items[0]: invalid option options: 5 (expected an object of enqueue options)',
    ],
    // The item a bad option is in, in a large batch.
    [
      [{ name: 't' }, { name: 't' }, { name: 't', options: { delay: -1 } }],
      'enqueueMany() items[2]: invalid option delay: -1 (expected a duration >= 0 up to 100 years, in ms or a string like "30s")',
    ],
    [
      [{ name: 't' }, { name: 't', options: { onSuccess: task('u', [], { retries: -1 }) } }],
      'enqueueMany() items[1] workflow onSuccess: invalid option retries: -1 (expected an integer from 0 to 2^53-1)',
    ],
  ])('enqueueMany(%j) names the item at fault, and enqueues nothing', async (items, message) => {
    const c = client();
    await expect(c.enqueueMany(items as never)).rejects.toBeInstanceOf(OptionError);
    await expect(c.enqueueMany(items as never)).rejects.toThrow(message);
    expect((await (c.broker as Broker).counts(['default']))[0]!.waiting).toBe(0);
  });

  it.each([[null], ['abc'], [{ name: 't' }]])(
    'enqueueMany(%j) refuses what is not an array, naming it',
    async (items) => {
      await expect(client().enqueueMany(items as never)).rejects.toThrow(
        `invalid option items: ${JSON.stringify(items)} (expected an array of { name, args?, options? })`,
      );
    },
  );
});

describe('revoke options', () => {
  it.each([
    [{ terminate: 'yes' }, /invalid option terminate: "yes" \(expected true or false\)/],
    [{ grace: 'soon' }, /invalid option grace: "soon"/],
    [{ grace: -5 }, /invalid option grace: -5/],
    [{ terminat: true }, /terminat/],
  ])('refuses %j, naming it, and revokes nothing', async (options, message) => {
    const c = client();
    const job = await c.enqueue('t', []);
    await expect(job.revoke(options as never)).rejects.toThrow(message);
    await expect(job.revoke(options as never)).rejects.toBeInstanceOf(OptionError);
    // Still waiting in its queue: not revoked.
    expect(await job.state()).toMatchObject({ state: 'PENDING', queue: 'default' });
  });

  it('refuses an empty id, naming it', async () => {
    await expect(client().revoke('')).rejects.toThrow(/invalid option id: ""/);
  });
});
