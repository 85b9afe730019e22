// B4 — idle memory of a node with 2 processes (scenarios: idle-memory.mjs, idle-memory-cli.mjs).
import { cell, dec, good, ratio, runsCell, stat, target, times } from '../lib/report.mjs';

// Two idle times after the last of 50 no-op jobs: 3 s (just after the work),
// and 12 s (idle for a while: after prefork's idle trim, 10 s after its pool
// ran dry, and after V8's memory reducer has usually shrunk the young
// generation). Every node is measured at both.
const SETTLES = [3_000, 12_000];

export default {
  id: 'B4',
  kind: 'redis',
  title: 'B4 — idle memory, 2 processes (RSS / PSS / USS summed over the parent and its children)',

  cases({ url }) {
    const nodes = [
      { id: 'worker', label: 'prefork Worker (Redis), 2 processes', params: { impl: 'worker', url }, redis: true },
      {
        id: 'bullmq-sandboxed',
        label: 'BullMQ Worker, sandboxed processor, concurrency 2 (2 child processes)',
        params: { impl: 'bullmq-sandboxed', url },
        redis: true,
        peer: true,
      },
      { id: 'pool', label: 'prefork Pool alone, 2 processes', params: { impl: 'pool' } },
      { id: 'piscina', label: 'piscina, 2 threads', params: { impl: 'piscina' }, peer: true },
      { id: 'workerpool', label: 'workerpool, 2 processes', params: { impl: 'workerpool' }, peer: true },
    ].map((c) => ({ ...c, file: 'idle-memory.mjs' }));
    nodes.push({
      id: 'cli',
      label: 'prefork worker -c 2 (its own process; jobs enqueued from another)',
      file: 'idle-memory-cli.mjs',
      params: { url },
      redis: true,
    });
    return SETTLES.flatMap((settleMs) =>
      nodes.map((c) => ({
        ...c,
        id: `${c.id}-${settleMs / 1000}s`,
        node: c.id,
        settleMs,
        params: { ...c.params, settleMs },
      })),
    );
  },

  tables({ cases }) {
    const bullmq = (x) => cases.find((c) => c.node === 'bullmq-sandboxed' && c.settleMs === x.settleMs);
    return [
      {
        header: [
          'node',
          'idle for',
          'processes',
          'RSS MiB',
          'PSS MiB',
          'USS MiB',
          'PSS ÷ BullMQ sandboxed (same round)',
          'USS ÷ BullMQ sandboxed (same round)',
          'runs',
        ],
        rows: cases.map((x) => [
          x.label,
          `${x.settleMs / 1000} s`,
          good(x)[0]?.processes ?? 'n/a',
          cell(stat(x, 'rssMiB'), dec(1)),
          cell(stat(x, 'pssMiB'), dec(1)),
          cell(stat(x, 'ussMiB'), dec(1)),
          x.node === 'bullmq-sandboxed' ? '1×' : cell(ratio(x, bullmq(x), 'pssMiB'), times),
          x.node === 'bullmq-sandboxed' ? '1×' : cell(ratio(x, bullmq(x), 'ussMiB'), times),
          runsCell(x),
        ]),
        notes: [
          `Each node is measured twice, in separate runs: "idle for" is the time from the last of its 50 no-op jobs settling to the reading — ${SETTLES[0] / 1000} s (just after the work; V8 has not yet shrunk the young generation) and ${SETTLES[1] / 1000} s (idle for a while: prefork's pool trims its parent 10 s after it ran dry, and V8's memory reducer has usually trimmed the children by then). Every implementation is read at both times, so compare rows with the same "idle for".`,
          'The parent is the scenario process itself (it imports only what that node needs, starts the node, then enqueues the jobs with a Client, or a BullMQ Queue, which it closes before the wait), except for `prefork worker`: the CLI’s process and its children, the jobs enqueued by the scenario process. BullMQ: `new Worker(queue, processorFile, { concurrency: 2, useWorkerThreads: false })` on the same private Redis, the processor file of B1 (`peers/bullmq-processor.mjs`); BullMQ forks its children on demand and keeps them, so both exist after 50 jobs.',
          'processes: how many processes were counted (the scenario process and its descendants, from /proc/<pid>/task/*/children); a run counts only if that is 3 (piscina: 1, its workers are threads).',
          'RSS counts every resident page; PSS splits each shared page among the processes that map it, so it depends on how many other Node processes on the machine share the node binary’s pages at that moment (the same node has measured 54–92 MiB PSS with the same RSS): compare PSS only within one run. USS (Private_Clean + Private_Dirty) counts only the pages no other process maps, and does not depend on the machine’s other processes. The ratio columns divide by BullMQ sandboxed’s reading of the same round at the same idle time.',
          'Targets (issue 15, “light when idle”), each at 3 s and at 12 s: the Worker row’s PSS against the issue’s fixed 62 MiB (BullMQ sandboxed’s footprint as measured outside this bench: PSS moves with the machine), and the Worker row’s PSS divided by BullMQ sandboxed’s in the same round at the same idle time, ≤ 1× (the fair comparison).',
        ],
      },
    ];
  },

  targets({ cases }) {
    const at = (node, settleMs) => cases.find((c) => c.node === node && c.settleMs === settleMs);
    return SETTLES.flatMap((settleMs) => {
      const s = settleMs / 1000;
      return [
        target(
          15,
          `idle PSS, Worker parent + 2 children, ${s} s idle ≤ 62 MiB (issue 15’s figure for BullMQ sandboxed, not from this run)`,
          stat(at('worker', settleMs), 'pssMiB'),
          dec(1),
          62,
          'atMost',
          ' MiB',
        ),
        target(
          15,
          `idle PSS, Worker parent + 2 children, ${s} s idle ≤ BullMQ sandboxed’s (concurrency 2), same round (ratio)`,
          ratio(at('worker', settleMs), at('bullmq-sandboxed', settleMs), 'pssMiB'),
          times,
          1,
          'atMost',
        ),
      ];
    });
  },
};
