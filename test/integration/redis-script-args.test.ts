import { beforeEach, describe, expect, it } from 'vitest';
import { GROUP } from '../../dist/broker/redis/keys.js';
import type { RedisBroker } from '../../dist/broker/redis/redis-broker.js';
import { callScript, defineScripts } from '../../dist/broker/redis/scripts.js';
import type { Delivery } from '../../dist/broker/types.js';
import { fetchFrom, job, Scope, eachNode } from './redis-helpers.js';

/**
 * Redis does not roll back a script that fails half-way: each script checks
 * its arguments before its first write, so a bad one changes nothing. These
 * call the scripts directly with bad arguments, then look at what is left.
 */
let scope: Scope;
let broker: RedisBroker;
const NODE = 'node-a';

eachNode(['q'], (s, b) => {
  scope = s;
  broker = b;
});
beforeEach(() => {
  defineScripts(scope.raw);
});

/** One job, reserved by NODE. */
async function reserved(): Promise<Delivery> {
  await broker.enqueue([job('q')]);
  const [d] = (await fetchFrom(broker, NODE, ['q'], 1)).deliveries;
  return d!;
}

/** The fetch script settling one delivery with op/arg, settle-only (node id ''). */
function settleRaw(d: Delivery, op: string, arg: string, queueIndex: number | string = 1): Promise<unknown> {
  const keys = [
    scope.key('nodes'),
    scope.key('q:q'),
    scope.key('rd:q'),
    scope.key('delayed:q'),
    scope.key('dead:q'),
    scope.key('jobs'),
    scope.key('unapplied:t'),
  ];
  return callScript(scope.raw, 'fetchJobs', keys, [
    '',
    0,
    1,
    0,
    10,
    100,
    1,
    0,
    op,
    queueIndex,
    'q',
    d.receipt.slice(2),
    arg,
    d.job.id,
  ]);
}

async function stillReserved(d: Delivery): Promise<void> {
  const entries = await scope.raw.xrange(scope.key('q:q'), d.receipt.slice(2), d.receipt.slice(2));
  expect(entries).toHaveLength(1);
  const pending = (await scope.raw.xpending(scope.key('q:q'), GROUP)) as [number];
  expect(pending[0]).toBe(1);
  expect((await broker.counts(['q']))[0]).toMatchObject({ reserved: 1, delayed: 0, dead: 0 });
}

describe('fetch script: a bad settlement argument loses no job', () => {
  it.each([
    ['a retry delay of nan', 'r', 'nan', 1, /ARGV\[13\] \(retry delay \(ms\)[^)]*\) is "nan"/],
    ['a retry delay of inf', 'r', 'inf', 1, /retry delay/],
    ['a fractional retry delay', 'r', '1.5', 1, /retry delay/],
    ['a negative retry delay', 'r', '-5', 1, /retry delay/],
    ['an unknown op', 'x', '0', 1, /ARGV\[9\] \(settlement op[^)]*\) is "x"/],
    ['a queue index out of range', 'r', '10', 2, /queue index/],
    ['a bad give-back flag', 'g', 'yes', 1, /give-back/],
  ])('%s fails the call and leaves the job reserved', async (_what, op, arg, queueIndex, message) => {
    const d = await reserved();
    await expect(settleRaw(d, op, arg, queueIndex)).rejects.toThrow(message);
    await stillReserved(d);
  });

  it('a retry with a good delay still moves the job (the checks pass what is valid)', async () => {
    const d = await reserved();
    await settleRaw(d, 'r', '60000');
    expect((await broker.counts(['q']))[0]).toMatchObject({ reserved: 0, delayed: 1 });
  });

  it('a miscounted argument list fails before any ack', async () => {
    const d = await reserved();
    const keys = [
      scope.key('nodes'),
      scope.key('q:q'),
      scope.key('rd:q'),
      scope.key('delayed:q'),
      scope.key('dead:q'),
      scope.key('jobs'),
      scope.key('unapplied:t'),
    ];
    // One ack group claiming two ids, followed by one: the count is wrong.
    await expect(
      callScript(scope.raw, 'fetchJobs', keys, ['', 0, 1, 0, 10, 100, 0, 1, 1, 'q', 2, d.receipt.slice(2)]),
    ).rejects.toThrow(/number of acks/);
    await stillReserved(d);
  });
});

describe('other scripts check their arguments first', () => {
  it('claimRecovery with a bad hold leaves the node registered', async () => {
    await expect(
      callScript(
        scope.raw,
        'claimRecovery',
        [scope.key('nodes'), scope.key('recovering'), scope.key('leader')],
        [NODE, 'soon', '1', scope.key('ctl-wake')],
      ),
    ).rejects.toThrow(/claim hold/);
    expect(await scope.raw.zscore(scope.key('nodes'), NODE)).not.toBeNull();
  });

  it('enqueueJobs with one bad row adds none of the batch', async () => {
    const { pack } = await import('msgpackr');
    const good = ['id1', 'add', 'p', '0', '0', '{}'];
    await expect(
      callScript(scope.raw, 'enqueueJobs', [scope.key('q:q'), scope.key('jobs')], [pack([good, ['id2', 'add']])]),
    ).rejects.toThrow(/row 2/);
    expect(await scope.raw.xlen(scope.key('q:q'))).toBe(0);
  });

  it('enqueueDelayed rejects an unknown mode and a non-integer delay', async () => {
    const keys = [scope.key('delayed:q'), scope.key('q:q'), scope.key('jobs')];
    await expect(callScript(scope.raw, 'enqueueDelayed', keys, ['later', 5, 'id', 'x'])).rejects.toThrow(/mode/);
    await expect(callScript(scope.raw, 'enqueueDelayed', keys, ['delay', 'nan', 'id', 'x'])).rejects.toThrow(
      /delay \(ms\)/,
    );
    expect(await scope.raw.exists(scope.key('delayed:q'), scope.key('q:q'))).toBe(0);
  });

  it('enqueueOnce rejects a spec that does not match its keys, a bad mode and a bad ttl, adding nothing', async () => {
    const keys = [scope.key('q:q'), scope.key('delayed:q'), scope.key('jobs'), scope.key('unique:k:x')];
    const fields = ['id', 'j1', 'task', 'add'];
    await expect(callScript(scope.raw, 'enqueueOnce', keys, ['iu', 0, 'now', 0, ...fields])).rejects.toThrow(
      /unique spec/,
    );
    await expect(callScript(scope.raw, 'enqueueOnce', keys, ['u', 0, 'soon', 0, ...fields])).rejects.toThrow(/mode/);
    await expect(callScript(scope.raw, 'enqueueOnce', keys, ['u', -1, 'now', 0, ...fields])).rejects.toThrow(
      /unique ttl/,
    );
    await expect(callScript(scope.raw, 'enqueueOnce', keys, ['u', 0, 'now', 0, 'id', ''])).rejects.toThrow(/job id/);
    expect(await scope.raw.exists(scope.key('q:q'), scope.key('jobs'), scope.key('unique:k:x'))).toBe(0);
  });

  it('storeResults with a bad ttl, a bad reply index or a record missing stores none of the batch', async () => {
    const keys = [scope.key('res:a'), scope.key('res:b'), scope.key('unapplied:t')];
    const head = [0, 10_000, 32, 60_000];
    await expect(
      callScript(scope.raw, 'storeResults', keys, [...head, 1000, 'ra', 0, 'a', 'soon', 'rb', 0, 'b']),
    ).rejects.toThrow(/ARGV\[9\] \(ttl \(ms\): expected an integer >= 1\) is "soon"/);
    await expect(
      callScript(scope.raw, 'storeResults', keys, [...head, 1000, 'ra', 0, 'a', 1000, 'rb', 1, 'b']),
    ).rejects.toThrow(/reply list index/);
    await expect(callScript(scope.raw, 'storeResults', keys, [...head, 1000, 'ra', 0, 'a', 1000])).rejects.toThrow(
      /4 \+ 4 per result \+ 1 per reply list args: 2 results, 0 lists, 9 args/,
    );
    expect(await scope.raw.exists(...keys)).toBe(0);
    expect(await callScript(scope.raw, 'storeResults', keys, [...head, 60_000, 'ra', 0, 'a', 1, 'rb', 0, 'b'])).toBe(2);
    expect(await scope.raw.get(scope.key('res:a'))).toBe('ra');
    expect(await scope.raw.pttl(scope.key('res:a'))).toBeGreaterThan(1);
  });

  it('storeResults announces a record inline while its reply list is short, else the id; a list of another type is skipped, and named', async () => {
    const reply = scope.key('reply:c');
    const other = scope.key('reply:d');
    const ids = ['a', 'b', 'c'];
    const keys = [...ids.map((id) => scope.key(`res:${id}`)), reply, scope.key('unapplied:t')];
    // Inline while the list holds fewer than 2 entries; 'c' asks for its id only (-1).
    const args = [1, 10_000, 2, 60_000, 1000, 'ra', 1, 'a', 1000, 'rb', 1, 'b', 1000, 'rc', -1, 'c', '0'];
    expect(await callScript(scope.raw, 'storeResults', keys, args)).toBe(3);
    const entries = async (): Promise<string[]> =>
      (await scope.raw.lrangeBuffer(reply, 0, -1)).map((b) => b.toString('latin1'));
    expect(await entries()).toEqual(['c', '\xffrb', '\xffra']);
    // Now 3 long: ids only, and the list is trimmed when flagged.
    expect(
      await callScript(
        scope.raw,
        'storeResults',
        [scope.key('res:e'), reply, scope.key('unapplied:t')],
        [1, 2, 2, 60_000, 1000, 're', 1, 'e', '1'],
      ),
    ).toBe(1);
    expect(await entries()).toEqual(['e', 'c']);
    expect(await scope.raw.pttl(reply)).toBeGreaterThan(1);

    // Another program wrote a string where a reply list should be: the results are stored, the good list told, the call fails naming the bad one.
    await scope.raw.set(other, 'not a list');
    await scope.raw.del(reply);
    const mixed = [scope.key('res:f'), scope.key('res:g'), other, reply, scope.key('unapplied:t')];
    await expect(
      callScript(scope.raw, 'storeResults', mixed, [
        2,
        10_000,
        0,
        60_000,
        1000,
        'rf',
        -1,
        'f',
        1000,
        'rg',
        -2,
        'g',
        '0',
        '0',
      ]),
    ).rejects.toThrow(/WRONGTYPE .*reply:d holds another type/);
    expect(await scope.raw.get(scope.key('res:f'))).toBe('rf');
    expect(await scope.raw.get(scope.key('res:g'))).toBe('rg');
    expect(await scope.raw.lrange(reply, 0, -1)).toEqual(['g']);
    expect(await scope.raw.get(other)).toBe('not a list');
  });

  it('adoptEntries and the orphan sweep refuse bad arguments, changing nothing', async () => {
    const d = await reserved();
    const streams = [scope.key('q:q'), scope.key('rd:q')];
    const adoptKeys = [scope.key('nodes'), scope.key('node:old'), ...streams];
    await expect(callScript(scope.raw, 'adoptEntries', adoptKeys, [NODE, NODE])).rejects.toThrow(/ARGV\[2\]/);
    await expect(callScript(scope.raw, 'adoptEntries', adoptKeys, ['', 'other'])).rejects.toThrow(/ARGV\[1\]/);
    // NODE's lease is live: not adopted.
    expect(await callScript(scope.raw, 'adoptEntries', adoptKeys, [NODE, 'other'])).toBe(-1);
    const beatKeys = [scope.key('nodes'), scope.key('recovering'), scope.key(`ctl:${NODE}`), ...streams];
    for (const bad of [
      ['3', '0'],
      ['-1', '0'],
      ['2', 'soon'],
    ]) {
      await expect(callScript(scope.raw, 'heartbeat', beatKeys, [NODE, 60_000, 5, '0', '0', ...bad])).rejects.toThrow(
        /ARGV\[[67]\]/,
      );
    }
    const pending = (await scope.raw.xpending(scope.key('q:q'), GROUP, '-', '+', 10, NODE)) as unknown[][];
    expect(pending.map((e) => `q:${String(e[0])}`)).toEqual([d.receipt]);
  });

  it('swapResult writes only over the result read; bad arguments change nothing', async () => {
    const res = scope.key('res:j');
    for (const bad of [
      ['x', '', 'r1', 60_000],
      ['0', '', '', 60_000],
      ['0', '', 'r1', 'soon'],
    ])
      await expect(callScript(scope.raw, 'swapResult', [res], bad)).rejects.toThrow(/ARGV\[[134]\]/);
    await expect(
      callScript(scope.raw, 'swapResult', [res, scope.key('reply:c')], ['0', '', 'r1', 60_000]),
    ).rejects.toThrow(/expected 1 key/);
    expect(await scope.raw.exists(res)).toBe(0);
    // None read, none stored: written, with its ttl.
    expect(await callScript(scope.raw, 'swapResult', [res], ['0', '', 'r1', 60_000])).toBe(1);
    expect(await scope.raw.get(res)).toBe('r1');
    expect(await scope.raw.pttl(res)).toBeGreaterThan(1);
    // Changed meanwhile (one stored, or another than the one read): nothing written.
    expect(await callScript(scope.raw, 'swapResult', [res], ['0', '', 'r2', 60_000])).toBe(0);
    expect(await callScript(scope.raw, 'swapResult', [res], ['1', 'r0', 'r2', 60_000])).toBe(0);
    expect(await scope.raw.get(res)).toBe('r1');
    expect(await callScript(scope.raw, 'swapResult', [res], ['1', 'r1', 'r3', 60_000])).toBe(1);
    expect(await scope.raw.get(res)).toBe('r3');
  });
});
