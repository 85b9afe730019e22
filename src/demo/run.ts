import { fileURLToPath } from 'node:url';
import type { ResultRecord } from '../broker/types.js';
import { Client } from '../client.js';
import type { Logger } from 'pino';
import { createLogger, envLogLevel } from '../logger.js';
import { Worker } from '../worker.js';
import { chord, task } from '../workflow/parts.js';

export interface DemoOptions {
  jobs: number;
  concurrency: number;
  out: NodeJS.WriteStream;
}

const TASKS = fileURLToPath(new URL('./tasks.js', import.meta.url));

/** Which task the i-th job runs: mostly real work, and a few of each way a job goes wrong. */
function jobFor(i: number): { name: string; args: unknown[] } {
  if (i % 97 === 13) return { name: 'segfault', args: [] };
  if (i % 61 === 7) return { name: 'hang', args: [] };
  if (i % 17 === 5) return { name: 'parse', args: [`<row ${i}>`] };
  if (i % 3 === 0) return { name: 'fetchPage', args: [20 + (i % 5) * 10] };
  return { name: 'cpu', args: [5 + (i % 4) * 5] };
}

/**
 * `prefork demo` / `npm start`: a Worker and a Client on the embedded
 * memory:// broker, a mixed batch of jobs, a live progress line, a summary.
 */
export async function runDemo(options: DemoOptions): Promise<void> {
  const { out } = options;
  const logger = createLogger({ level: envLogLevel('silent') });
  const broker = `memory://demo-${process.pid}`;
  const worker = new Worker({ app: TASKS, broker, concurrency: options.concurrency, logger, name: 'demo@local' });
  const client = new Client({ broker, logger });
  out.write(
    `prefork demo: ${options.jobs} jobs on ${options.concurrency} child processes, broker ${broker} (embedded)\n`,
  );
  await worker.start();
  const started = performance.now();
  const handles = await client.enqueueMany(Array.from({ length: options.jobs }, (_, i) => jobFor(i)));
  const records: ResultRecord[] = [];
  const progress = new Progress(out, options.jobs);
  const timer = setInterval(() => progress.render(records, performance.now() - started), out.isTTY ? 100 : 1000);
  await Promise.all(handles.map((h) => client.waitForResult(h.id, undefined, true).then((r) => void records.push(r))));
  clearInterval(timer);
  const elapsed = performance.now() - started;
  progress.render(records, elapsed, true);
  const chorded = await runChord(broker, client, logger);
  await worker.stop();
  await client.close();
  out.write(summary(records, elapsed, chorded));
}

/**
 * A small chord: eight cpu jobs in parallel, then `total` once with their
 * results, on a second node of the same broker that serves queue `chords`
 * (quiet: the log lines of `PREFORK_LOG_LEVEL=info` stay the batch's).
 */
async function runChord(broker: string, client: Client, logger: Logger): Promise<string> {
  const quiet = logger.child({}, { level: logger.isLevelEnabled('warn') ? 'warn' : 'silent' });
  const node = new Worker({
    app: TASKS,
    broker,
    concurrency: 2,
    queues: ['chords'],
    logger: quiet,
    name: 'chords@local',
  });
  await node.start();
  const members = Array.from({ length: 8 }, (_, i) => task('cpu', [5 + i], { queue: 'chords' }));
  const flow = await client.enqueue(chord(members, task('total', [], { queue: 'chords' })));
  const value = await flow.result({ timeout: '60s' });
  const view = await flow.state();
  await node.stop();
  const states = (view?.tree.children?.[0]?.children ?? []).map((m) => m.state);
  const done = states.filter((state) => state === 'SUCCESS').length;
  return `a chord:     ${done}/${states.length} cpu jobs in parallel, then total(results) once: ${String(value)} (workflow ${flow.id})`;
}

class Progress {
  constructor(
    private readonly out: NodeJS.WriteStream,
    private readonly total: number,
  ) {}

  render(records: readonly ResultRecord[], ms: number, last = false): void {
    const failed = records.filter((r) => r.state === 'FAILURE').length;
    const line = `  ${records.length}/${this.total} settled · ${records.length - failed} ok · ${failed} failed · ${(ms / 1000).toFixed(1)} s`;
    if (this.out.isTTY) this.out.write(`\r${line}${last ? '\n' : ''}`);
    else this.out.write(`${line}\n`);
  }
}

function summary(records: readonly ResultRecord[], ms: number, chorded: string): string {
  const ok = records.filter((r) => r.state === 'SUCCESS');
  // Per reason, how many failed and which tasks they were.
  const byReason = new Map<string, { count: number; tasks: Set<string> }>();
  const byPid = new Map<number, number>();
  for (const r of records) {
    if (r.state === 'FAILURE') {
      const reason = r.error?.name ?? 'Error';
      const entry = byReason.get(reason) ?? { count: 0, tasks: new Set<string>() };
      entry.count++;
      entry.tasks.add(r.task);
      byReason.set(reason, entry);
    }
    if (r.pid !== undefined) byPid.set(r.pid, (byPid.get(r.pid) ?? 0) + 1);
  }
  const lines = [
    '',
    `done:        ${ok.length} succeeded, ${records.length - ok.length} failed, in ${(ms / 1000).toFixed(2)} s (${Math.round((records.length / ms) * 1000)} jobs/s)`,
    'failed by reason:',
    ...[...byReason]
      .sort((a, b) => b[1].count - a[1].count)
      .map(([reason, { count, tasks }]) => `  ${reason.padEnd(24)} ${String(count).padEnd(5)} ${whyFailed(tasks)}`),
    'jobs per child process (a crashed or killed child is replaced by a new pid):',
    ...[...byPid].sort((a, b) => a[0] - b[0]).map(([pid, n]) => `  pid ${String(pid).padEnd(8)} ${n}`),
    chorded,
    '',
    'next:',
    "  your own tasks on Redis:  the README's Quickstart (redis-server, tasks.mjs, npx prefork worker, npx prefork enqueue --wait)",
    '  this demo, bigger:        npx prefork demo --jobs 2000 -c 4',
    "  a worker's view:          PREFORK_LOG_LEVEL=info npx prefork demo --jobs 20   (one log line per job event)",
    '',
  ];
  return lines.join('\n');
}

/** The demo's own tasks fail on purpose: say which task and how. */
const DEMO_FAILURES = new Map([
  ['hang', 'ran past its 300 ms time limit; its child was killed and replaced'],
  ['segfault', 'killed its own child process; a new one took over'],
  ['parse', 'threw on bad input'],
]);

function whyFailed(tasks: ReadonlySet<string>): string {
  const names = [...tasks].sort();
  const how = names.length === 1 ? DEMO_FAILURES.get(names[0] ?? '') : undefined;
  return `task ${names.join(', ')}${how === undefined ? '' : `: ${how}`}`;
}
