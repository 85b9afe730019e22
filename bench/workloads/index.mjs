// The workloads `npm run bench` runs, in order: one module per workload of
// bench/README.md. run.js runs each workload's cases (3 rounds, ours and
// peers alternating) and RESULTS.md gets one section per workload, from the
// module's tables(), and one Targets section from every module's targets().
//
// A workload module: { id, kind ('pool' | 'redis', for BENCH_ONLY), title,
//   cases(ctx) → [{ id, label, file (a scenario under bench/), params, peer?, redis?, timeoutMs? }],
//   tables(ctx) → [{ title?, header, rows, notes }],
//   targets(ctx) → [{ issue, target, measured, met, missed }],
//   profileCases? → case ids run once more under --cpu-prof when a target is missed }
// ctx: { quick, warmup, spin, nproc, url, cases (this workload's, with .results), group(id) → another workload's cases }.
import a1 from './a1-noop.mjs';
import a2 from './a2-latency.mjs';
import a3 from './a3-cpu.mjs';
import b1 from './b1-drain.mjs';
import b1e from './b1-enqueue.mjs';
import b1l from './b1-latency.mjs';
import b2 from './b2-cpu.mjs';
import b3 from './b3-idle.mjs';
import b4 from './b4-memory.mjs';
import b5 from './b5-start.mjs';
import b6 from './b6-many-nodes.mjs';
import b7 from './b7-revoked.mjs';
import b8 from './b8-schedule.mjs';
import b9 from './b9-rate-limit.mjs';
import b10 from './b10-chord.mjs';
import b11 from './b11-dashboard.mjs';

export const workloads = [a1, a2, a3, b1, b1e, b1l, b2, b3, b4, b5, b6, b7, b8, b9, b10, b11];
