// What `npm run bench` runs: the groups of BENCH.md and their cases, in the
// order they run within one round (ours and peers alternating). run.js repeats
// each group's round `runs` times before moving to the next group.

export function groups({ quick, iterations, url }) {
  const n = quick
    ? { a1: 20_000, a2: 2_000, a3: 400, warm: 500, b1: 5_000, single: 1_000, bulk: 5_000, lat: 200, latWarm: 50, b2: 200, idleS: 10 }
    : { a1: 200_000, a2: 20_000, a3: 4_000, warm: 2_000, b1: 50_000, single: 10_000, bulk: 50_000, lat: 2_000, latWarm: 200, b2: 2_000, idleS: 10 };

  const pool = (impl, strategy, processes) => ({ impl, strategy, processes, peer: impl !== 'prefork' });
  const poolLabel = (c) => (c.impl === 'prefork' ? `prefork ${c.strategy}` : c.impl === 'workerpool' ? 'workerpool (process)' : 'piscina (threads)');

  const a1 = [pool('prefork', 'fcfs', 2), pool('piscina', undefined, 2), pool('prefork', 'fair', 2), pool('workerpool', undefined, 2), pool('prefork', 'fcfs', 1), pool('prefork', 'fair', 1), pool('prefork', 'fcfs', 4), pool('prefork', 'fair', 4)].map((c) => ({
    ...c,
    id: `${c.impl}-${c.strategy ?? ''}-${c.processes}`,
    label: `${poolLabel(c)}, ${c.processes}p`,
    file: 'pool-throughput.mjs',
    params: { impl: c.impl, strategy: c.strategy, processes: c.processes, jobs: n.a1, warmup: n.warm },
  }));
  a1.splice(4, 0, { id: 'pipe-echo', impl: 'pipe-echo', processes: 2, peer: true, label: 'bare framed-pipe echo, no pool (transport reference), 2p', file: 'pipe-echo.mjs', params: { processes: 2, jobs: n.a1, batch: 256, warmup: n.warm } });

  const a2 = [pool('prefork', 'fair', 2), pool('piscina', undefined, 2), pool('prefork', 'fcfs', 2), pool('workerpool', undefined, 2)].map((c) => ({
    ...c,
    id: `${c.impl}-${c.strategy ?? ''}`,
    label: `${poolLabel(c)}, 2p`,
    file: 'pool-latency.mjs',
    params: { impl: c.impl, strategy: c.strategy, processes: 2, jobs: n.a2, warmup: n.warm },
  }));

  const a3 = [
    { ...pool('prefork', 'fair', 2), id: 'prefork-fair' },
    { ...pool('piscina', undefined, 2), id: 'piscina' },
    { id: 'bare', impl: 'bare', label: 'bare: 2 plain node processes, no pool', file: 'bare-cpu.mjs', params: { processes: 2, jobs: n.a3, iterations }, peer: true },
    { ...pool('prefork', 'fcfs', 2), id: 'prefork-fcfs' },
    { ...pool('workerpool', undefined, 2), id: 'workerpool' },
  ].map((c) => (c.file ? c : { ...c, label: `${poolLabel(c)}, 2p`, file: 'pool-cpu.mjs', params: { impl: c.impl, strategy: c.strategy, processes: 2, jobs: n.a3, iterations, warmup: n.warm } }));

  const drain = (impl, o) => ({
    id: impl === 'prefork' ? `prefork-${o.strategy}-${o.ignoreResult ? 'ign' : 'res'}-pm${o.prefetchMultiplier}` : `bullmq-${o.mode}-c${o.concurrency}-${o.ignoreResult ? 'ign' : 'res'}`,
    impl,
    peer: impl !== 'prefork',
    redis: true,
    ...o,
    label: impl === 'prefork'
      ? `prefork ${o.strategy}, prefetchMultiplier ${o.prefetchMultiplier}`
      : `BullMQ ${o.mode}, concurrency ${o.concurrency}`,
    file: impl === 'prefork' ? 'redis-drain.mjs' : 'bullmq-drain.mjs',
    params: { url, task: 'noop', jobs: n.b1, warmup: n.warm, ...o },
  });
  const b1 = [
    drain('prefork', { strategy: 'fcfs', ignoreResult: true, prefetchMultiplier: 64 }),
    drain('bullmq', { mode: 'inline', concurrency: 2, ignoreResult: true }),
    drain('prefork', { strategy: 'fair', ignoreResult: true, prefetchMultiplier: 64 }),
    drain('bullmq', { mode: 'sandboxed', concurrency: 2, ignoreResult: true }),
    drain('prefork', { strategy: 'fcfs', ignoreResult: true, prefetchMultiplier: 4 }),
    drain('bullmq', { mode: 'inline', concurrency: 100, ignoreResult: true }),
    drain('prefork', { strategy: 'fcfs', ignoreResult: false, prefetchMultiplier: 64 }),
    drain('bullmq', { mode: 'inline', concurrency: 2, ignoreResult: false }),
    drain('prefork', { strategy: 'fair', ignoreResult: false, prefetchMultiplier: 64 }),
    drain('bullmq', { mode: 'sandboxed', concurrency: 2, ignoreResult: false }),
    drain('bullmq', { mode: 'inline', concurrency: 100, ignoreResult: false }),
  ];

  const enq = (impl, mode) => ({
    id: `${impl}-${mode}`,
    impl,
    mode,
    peer: impl !== 'prefork',
    redis: true,
    label: `${impl === 'prefork' ? 'prefork Client' : 'BullMQ Queue'} ${mode === 'single' ? (impl === 'prefork' ? 'enqueue' : 'add') + ', one by one (awaited)' : (impl === 'prefork' ? 'enqueueMany' : 'addBulk') + ', batches of 1,000'}`,
    file: 'redis-enqueue.mjs',
    params: { url, impl, mode, jobs: mode === 'single' ? n.single : n.bulk, warmup: quick ? 200 : 1000 },
  });
  const b1e = [enq('prefork', 'single'), enq('bullmq', 'single'), enq('prefork', 'bulk'), enq('bullmq', 'bulk')];

  const b1l = [{ id: 'prefork-fair', impl: 'prefork', redis: true, label: 'prefork Worker fair, 2p, idle; Client enqueue → result()', file: 'redis-latency.mjs', params: { url, jobs: n.lat, warmup: n.latWarm, strategy: 'fair', processes: 2 } }];

  const cpu = (impl, o) => ({
    id: impl === 'prefork' ? `prefork-${o.strategy}` : `bullmq-${o.mode}`,
    impl,
    peer: impl !== 'prefork',
    redis: true,
    ...o,
    label: impl === 'prefork' ? `prefork ${o.strategy}, prefetchMultiplier ${o.prefetchMultiplier}` : `BullMQ ${o.mode}, concurrency 2`,
    file: impl === 'prefork' ? 'redis-drain.mjs' : 'bullmq-drain.mjs',
    params: { url, task: 'spin', iterations, jobs: n.b2, warmup: n.warm, ignoreResult: true, ...o, ...(impl === 'bullmq' ? { concurrency: 2 } : {}) },
  });
  const b2 = [cpu('prefork', { strategy: 'fair', prefetchMultiplier: 4 }), cpu('bullmq', { mode: 'sandboxed' }), cpu('prefork', { strategy: 'fcfs', prefetchMultiplier: 4 }), cpu('bullmq', { mode: 'inline' })];

  const b3 = [{ id: 'prefork', impl: 'prefork', redis: true, label: 'prefork Worker, 2p, empty queue', file: 'redis-idle.mjs', params: { url, seconds: n.idleS }, timeoutMs: 60_000 }];

  const b4 = [
    { id: 'worker', label: 'prefork Worker (Redis), 2 processes', params: { impl: 'worker', url }, redis: true },
    { id: 'pool', label: 'prefork Pool alone, 2 processes', params: { impl: 'pool' } },
    { id: 'piscina', label: 'piscina, 2 threads', params: { impl: 'piscina' }, peer: true },
    { id: 'workerpool', label: 'workerpool, 2 processes', params: { impl: 'workerpool' }, peer: true },
  ].map((c) => ({ ...c, file: 'idle-memory.mjs', params: { ...c.params, settleMs: quick ? 1000 : 3000 } }));

  return [
    { id: 'A1', kind: 'pool', title: 'A1 — pool no-op throughput', jobs: n.a1, cases: a1 },
    { id: 'A2', kind: 'pool', title: 'A2 — round trip, one job in flight', jobs: n.a2, cases: a2 },
    { id: 'A3', kind: 'pool', title: 'A3 — CPU-bound, 2 processes', jobs: n.a3, cases: a3 },
    { id: 'B1', kind: 'redis', title: 'B1 — drain through Redis, 2 processes', jobs: n.b1, cases: b1 },
    { id: 'B1e', kind: 'redis', title: 'B1 — enqueue rate (no worker running)', jobs: n.bulk, cases: b1e },
    { id: 'B1l', kind: 'redis', title: 'B1 — latency enqueue → result, idle worker', jobs: n.lat, cases: b1l },
    { id: 'B2', kind: 'redis', title: 'B2 — CPU-bound through Redis, 2 processes', jobs: n.b2, cases: b2 },
    { id: 'B3', kind: 'redis', title: 'B3 — idle node: Redis commands per second', seconds: n.idleS, cases: b3 },
    { id: 'B4', kind: 'redis', title: 'B4 — idle memory, 2 processes (RSS / PSS summed over the parent and its children)', cases: b4 },
  ];
}
