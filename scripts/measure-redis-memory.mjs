// How many bytes Redis holds per queued job, per delayed job and per stored
// result: INFO memory deltas on a throwaway redis-server, for "Sizing Redis"
// in docs/failure-modes.md. Run after `npm run build`:
//   node scripts/measure-redis-memory.mjs [jobs=100000] [argument chars=0]
// (0 chars: the arguments are [1, 2]; else one string of that length).
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { startRedisServer } from './redis.mjs';
import { Client, Worker } from '../dist/index.js';

const N = Number(process.argv[2] ?? 100_000);
const chars = Number(process.argv[3] ?? 0);
const app = new URL('../test/fixtures/worker-tasks.mjs', import.meta.url).pathname;
const log = pino({ level: 'silent' });
const server = await startRedisServer();
const raw = new Redis(server.url);
const used = async () => Number(/used_memory:(\d+)/.exec(await raw.info('memory'))[1]);
const pause = () => new Promise((resolve) => setTimeout(resolve, 500));
const per = (bytes, n) => `${bytes} bytes, ${(bytes / n).toFixed(1)} each`;

async function drain(options) {
  const worker = new Worker({
    app,
    broker: server.url,
    logger: log,
    pool: { env: { PREFORK_TEST_LEDGER: '/dev/null' } },
    ...options,
  });
  await worker.start();
  while ((await raw.xlen('{prefork}:q:default')) > 0) await pause();
  await worker.stop();
  await pause();
}

async function enqueueAll(client, name, args, options) {
  for (let i = 0; i < N; i += 1000)
    await client.enqueueMany(Array.from({ length: Math.min(1000, N - i) }, () => ({ name, args, options })));
  await pause();
}

try {
  const client = new Client({ broker: server.url, logger: log });
  const args = chars > 0 ? ['x'.repeat(chars)] : [1, 2];
  const task = chars > 0 ? 'echo' : 'add';
  const shown = chars > 0 ? `a ${chars}-character string` : '[1, 2]';
  // The streams, the group, the delayed set and the reply list exist before the baselines.
  await client.enqueue(task, args, { ignoreResult: true });
  await client.enqueue(task, args, { ignoreResult: true, queue: 'later', delay: '1h' });
  await drain({ concurrency: 1 });

  let base = await used();
  await enqueueAll(client, task, args, { queue: 'later', delay: '1h', ignoreResult: true });
  console.log(`${N} delayed jobs, arguments ${shown}: ${per((await used()) - base, N)}`);

  base = await used();
  await enqueueAll(client, task, args, {});
  console.log(`${N} queued jobs, arguments ${shown}: ${per((await used()) - base, N)}`);
  await drain({ concurrency: 2, strategy: 'fcfs', prefetchMultiplier: 64 });
  let replies = 0;
  for (const key of await raw.keys('prefork:reply:*')) replies += Number(await raw.memory('USAGE', key));
  console.log(`${N} stored results (and a reply list of ${replies} bytes): ${per((await used()) - base - replies, N)}`);
  await client.close();
} finally {
  raw.disconnect();
  await server.stop();
}
