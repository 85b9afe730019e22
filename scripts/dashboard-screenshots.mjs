// The README's screenshots of the dashboard under load: a throwaway Redis,
// two worker nodes running the demo's tasks, a producer feeding three queues
// (some jobs fail, one kills its child), then the page in Debian's chromium.
// Run after `npm run build`: node scripts/dashboard-screenshots.mjs
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { Client } from '../dist/index.js';
import { CHROMIUM_ARGS, ensureChromiumInstalled } from './chromium.mjs';
import { startRedisServer } from './redis.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CLI = `${ROOT}dist/cli/main.js`;
const APP = `${ROOT}dist/demo/tasks.js`;
const LOAD_MS = Number(process.env.LOAD_MS ?? 45_000);

const redis = await startRedisServer();
const env = { ...process.env, PREFORK_BROKER_URL: redis.url, PREFORK_LOG_LEVEL: 'error' };
const procs = [];
const run = (args) => {
  const proc = spawn(process.execPath, [CLI, ...args], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  procs.push(proc);
  return proc;
};
run(['worker', '--app', APP, '-c', '3', '-n', 'node-a', '-Q', 'default,images', '--log-level', 'error']);
run(['worker', '--app', APP, '--autoscale', '4,1', '-n', 'node-b', '-Q', 'default,reports', '--log-level', 'error']);
const dashboard = run(['dashboard', '--port', '0', '--interval', '1s']);
const base = await new Promise((resolve) => {
  let out = '';
  dashboard.stdout.on('data', (chunk) => {
    out += chunk;
    const m = /dashboard on (http:\/\/\S+?)\/? /.exec(out);
    if (m) resolve(m[1]);
  });
});

const client = new Client({ broker: redis.url });
const pick = (a, b) => a + Math.floor(Math.random() * (b - a));
const until = Date.now() + LOAD_MS;
let round = 0;
while (Date.now() < until) {
  round++;
  const burst = round % 40 < 20 ? 6 : 2;
  const items = [];
  for (let i = 0; i < burst; i++) items.push({ name: 'cpu', args: [pick(20, 90)], options: { queue: 'default' } });
  for (let i = 0; i < 3; i++) items.push({ name: 'fetchPage', args: [pick(200, 900)], options: { queue: 'images' } });
  if (round % 3 === 0) items.push({ name: 'cpu', args: [pick(150, 400)], options: { queue: 'reports' } });
  if (round % 25 === 0)
    items.push({ name: 'parse', args: ['<script>alert("x")</script> not JSON'], options: { queue: 'default' } });
  if (round % 90 === 0) items.push({ name: 'segfault', args: [], options: { queue: 'reports' } });
  if (round % 30 === 0) items.push({ name: 'cpu', args: [50], options: { queue: 'reports', delay: '10m' } });
  await client.enqueueMany(items);
  await sleep(250);
}

mkdirSync(`${ROOT}docs/images`, { recursive: true });
const browser = await chromium.launch({ executablePath: ensureChromiumInstalled(), args: CHROMIUM_ARGS });
const page = await browser.newPage({ viewport: { width: 1400, height: 900 }, deviceScaleFactor: 1 });
await page.goto(base);
await page.waitForSelector('[data-node="node-b"]');
await page.locator('[data-queue="images"] button[data-browse="waiting"]').click();
await page.locator('#jobs-table tbody tr').first().waitFor();
await sleep(3_000);
await page.screenshot({ path: `${ROOT}docs/images/dashboard.png`, fullPage: true });
await page.locator('[data-queue="default"] button[data-browse="dead"]').click();
const link = page.locator('#jobs-table [data-job-link]').first();
await link.waitFor();
await link.click();
await page.waitForSelector('#job-detail .error-message');
await sleep(500);
await page.locator('#jobs-section').screenshot({ path: `${ROOT}docs/images/dashboard-dead-jobs.png` });
await page.locator('#job-section').screenshot({ path: `${ROOT}docs/images/dashboard-job.png` });
await browser.close();
await client.close();
for (const proc of procs) proc.kill('SIGTERM');
await Promise.all(procs.map((p) => new Promise((resolve) => p.once('exit', resolve))));
await redis.stop();
process.stdout.write('wrote docs/images/dashboard.png, dashboard-dead-jobs.png, dashboard-job.png\n');
