// B8 — periodic tasks: idle cost of a node with a schedule, and tick → start delay
// (scenarios: schedule-idle.mjs, schedule-latency.mjs).
import { cell, dec, good, runsCell, stat, target } from '../lib/report.mjs';

// Like B3: a window long enough for a heartbeat cycle to show (a beat every 8 s).
const idleSeconds = (quick) => (quick ? 10 : 120);
const ticks = (quick) => (quick ? 10 : 60);

export default {
  id: 'B8',
  kind: 'redis',
  title: 'B8 — periodic tasks: idle node with 100 hourly entries, and the delay from tick to job start',
  runs: 3,

  cases({ url, quick }) {
    return [
      {
        id: 'idle',
        label: 'prefork Worker, 2p, 100 entries every 1 h, idle',
        redis: true,
        file: 'schedule-idle.mjs',
        params: { url, seconds: idleSeconds(quick), entries: 100 },
        timeoutMs: (idleSeconds(quick) + 60) * 1000,
      },
      {
        id: 'delay',
        label: 'prefork Worker, 2p, one entry every 1 s, idle otherwise',
        redis: true,
        file: 'schedule-latency.mjs',
        params: { url, ticks: ticks(quick) },
        timeoutMs: (ticks(quick) + 60) * 1000,
      },
    ];
  },

  tables({ cases, quick }) {
    const [idle, delay] = cases;
    const ex = good(idle).map((r) => r.check);
    return [
      {
        header: ['node', 'measure', 'value', 'runs'],
        rows: [
          [idle.label, `commands/s over ${idleSeconds(quick)} s`, cell(stat(idle, 'perSec'), dec(2)), runsCell(idle)],
          [
            delay.label,
            `tick → start p50, ms (${ticks(quick)} ticks)`,
            cell(stat(delay, 'p50'), dec(0)),
            runsCell(delay),
          ],
          [delay.label, 'tick → start p99, ms', cell(stat(delay, 'p99'), dec(0)), runsCell(delay)],
        ],
        notes: [
          'Idle: INFO commandstats deltas (Lua inner commands included) between two snapshots, the node idle in between; the node leads (the only one), so its beats carry the leader lease.',
          "Delay: the child's Date.now() at the job's start minus the tick it stands for (currentTask().scheduledFor); Redis runs on this machine, so both are its clock.",
          ...(ex.length ? [`Idle, per run: ${ex.join(' / ')}`] : []),
        ],
      },
    ];
  },

  targets({ cases }) {
    const [idle, delay] = cases;
    return [
      target(
        14,
        '< 1 Redis command/s from an idle node with 100 hourly entries',
        stat(idle, 'perSec'),
        dec(2),
        1,
        'below',
        ' /s',
      ),
      target(14, 'tick → job start p50 ≤ 20 ms on an idle cluster', stat(delay, 'p50'), dec(0), 20, 'atMost', ' ms'),
    ];
  },
};
