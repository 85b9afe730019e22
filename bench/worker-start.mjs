// B5 — start time of a node with 2 processes: from `worker.start()` to its
// first fetch (the Worker's 'ready' event, emitted right after the consumer
// sends its first fetch, the children up).
// Knobs ($BENCH_PARAMS): url, impl (library: `new Worker()` then start() |
// cli: `prefork worker -c N` as a user types it), processes (2), repeats (5).
// Every start is a fresh Node process (cold module loading, child spawns,
// Redis connections, as a user's start is); this scenario runs `repeats` of
// them one after another and reports their median.
// library: a fresh process imports prefork, builds the Worker, then the
//   clock runs from start() to 'ready'; also reported: the import of prefork,
//   and the process's own start (its time origin) to 'ready'.
// cli: from the spawn of `prefork worker` to its 'worker ready' log line on stdout.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { params, report, runScenario } from './lib/child.mjs';
import { summarize } from './lib/stats.mjs';

const p = params();
const { url, impl = 'library', processes = 2, repeats = 5, once = false } = p;
const app = fileURLToPath(new URL('./fixtures/prefork-tasks.mjs', import.meta.url));
const cli = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));

/** One library start in this (fresh) process. */
async function startOnce() {
  const i0 = performance.now();
  const { Worker } = await import('prefork');
  const { quietLogger } = await import('./lib/redis.mjs');
  const importMs = performance.now() - i0;
  const worker = new Worker({ app, broker: url, namespace: 'bench', concurrency: processes, logger: quietLogger() });
  let ready = 0;
  worker.once('ready', () => (ready = performance.now()));
  const t0 = performance.now();
  await worker.start();
  await worker.stop();
  return { startMs: ready - t0, importMs, processMs: ready };
}

/** One `prefork worker` start, from its spawn to its 'worker ready' line. */
function cliOnce(n) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const args = [cli, 'worker', '--app', app, '--broker', url, '-c', String(processes), '-n', `b5-${n}`];
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    let startMs;
    child.stdout.on('data', (d) => {
      out += d;
      if (startMs === undefined && /"msg":"worker ready"/.test(out)) {
        startMs = performance.now() - t0;
        child.kill('SIGTERM');
      }
    });
    child.stderr.on('data', (d) => (err += d));
    child.on('exit', (code) =>
      startMs !== undefined && code === 0
        ? resolve({ startMs })
        : reject(new Error(`prefork worker exited ${code} before it was ready: ${err.trim().split('\n').pop()}`)),
    );
  });
}

if (once) {
  report({ ...(await startOnce()), ok: true });
} else {
  const runs = [];
  for (let n = 0; n < repeats; n++) {
    if (impl === 'cli') runs.push(await cliOnce(n));
    else {
      const r = await runScenario('worker-start.mjs', { ...p, once: true });
      if (r.error) throw new Error(r.error);
      runs.push(r);
    }
  }
  const median = (k) => summarize(runs.map((r) => r[k])).median;
  report({
    startMs: median('startMs'),
    ...(impl === 'cli' ? {} : { importMs: median('importMs'), processMs: median('processMs') }),
    ok: true,
    check: `${repeats} starts: ${runs.map((r) => r.startMs.toFixed(0)).join(', ')} ms`,
  });
}
