/**
 * The task module of `prefork demo` (and `npm start`): a mix of the work a
 * prefork pool is for, including the kinds that go wrong.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { currentTask, defineTasks } from '../task.js';

/** Burns `ms` of CPU: the work that would starve an in-process queue's event loop. */
function cpu(ms: number): number {
  const end = performance.now() + ms;
  let x = 0;
  while (performance.now() < end) x += Math.sqrt(x + 1);
  return Math.round(x) % 1000;
}

/** Waits on (pretend) I/O; honours the job's AbortSignal. */
async function fetchPage(ms: number): Promise<string> {
  await sleep(ms, undefined, { signal: currentTask().signal });
  return `page fetched in ${ms} ms`;
}

/** Fails like a bad input does. */
function parse(text: string): never {
  const err = new SyntaxError(`cannot parse ${JSON.stringify(text)}`);
  Object.assign(err, { input: text });
  throw err;
}

/** Hangs past its hard time limit: the child is killed and replaced. */
async function hang(): Promise<void> {
  await sleep(60_000);
}

/** Takes its child down with it: the job fails with WorkerLostError, a new child takes over. */
function segfault(): never {
  process.kill(process.pid, 'SIGKILL');
  throw new Error('unreachable');
}

/** Adds up a chord's results: its callback. */
function total(values: number[]): number {
  return values.reduce((a, b) => a + b, 0);
}

export default defineTasks({
  cpu,
  total,
  fetchPage,
  parse,
  hang: { run: hang, timeLimit: '300ms' },
  segfault,
});
