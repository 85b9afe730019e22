/**
 * The dashboard end to end: `prefork dashboard` and `prefork worker` as the
 * CLI runs them, on a real Redis (a database of this file's own), the page
 * in headless Chromium (Debian's, driven by playwright-core). It loads, its
 * numbers move while jobs run, a dead job's retry button brings the job back
 * and it succeeds, the grow button adds a child, an error message holding
 * markup shows as text and runs nothing, and a request without the token is
 * refused.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM_ARGS, ensureChromiumInstalled } from '../../scripts/chromium.mjs';
import { emptyRedisDb, fixture, makeClient, newLedger, cleanup } from '../helpers/worker.js';
import type { Client } from 'prefork';

const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const DB = 49;
const TOKEN = 'e2e-token';
const NODE = 'dash-e2e';
/** Markup in an error message: run as HTML, it would set window.__pwned. */
const MARKUP = '<script>window.__pwned = 1</script><img src="x" onerror="window.__pwned = 2">';

let url = '';
let env: NodeJS.ProcessEnv = {};
let base = '';
let browser: Browser;
let page: Page;
let client: Client;
const procs: ChildProcess[] = [];

function start(args: string[]): ChildProcess {
  const proc = spawn(process.execPath, [CLI, ...args], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  procs.push(proc);
  return proc;
}

/** The first line of `proc`'s stdout that matches `pattern`. */
function lineOf(proc: ChildProcess, pattern: RegExp): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    let out = '';
    proc.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = pattern.exec(out);
      if (m) resolve(m);
    });
    proc.once('exit', (code) => reject(new Error(`exited (code ${code}) before printing ${pattern}: ${out}`)));
  });
}

/** The rows of `selector`'s table, as text cells. */
function cell(selector: string): Promise<string> {
  return page.locator(selector).first().innerText();
}

beforeAll(async () => {
  const executablePath = ensureChromiumInstalled();
  url = await emptyRedisDb(DB);
  env = { ...process.env, PREFORK_BROKER_URL: url, PREFORK_TEST_LEDGER: newLedger() };
  start(['worker', '--app', fixture('tasks-dashboard.mjs'), '-c', '1', '-n', NODE, '--log-level', 'warn']);
  const dashboard = start(['dashboard', '--port', '0', '--auth-token', TOKEN, '--interval', '200ms']);
  base = (await lineOf(dashboard, /dashboard on (http:\/\/\S+?)\/? /))[1] as string;
  browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
  page = await browser.newPage({ viewport: { width: 1400, height: 1200 } });
  page.on('dialog', (d) => void d.accept());
  client = makeClient(url);
}, 600_000);

afterAll(async () => {
  await browser?.close();
  for (const proc of procs) proc.kill('SIGTERM');
  await Promise.all(
    procs
      .filter((p) => p.exitCode === null && p.signalCode === null)
      .map((p) => new Promise((resolve) => p.once('exit', resolve))),
  );
  await cleanup();
});

describe('prefork dashboard in a browser', { timeout: 120_000 }, () => {
  it('refuses a request without the token; /?token= opens the page and the live node shows', async () => {
    expect((await fetch(`${base}/`)).status).toBe(401);
    expect((await fetch(`${base}/api/overview`)).status).toBe(401);
    const refused = await page.goto(`${base}/`);
    expect(refused?.status()).toBe(401);
    expect(await page.locator('body').innerText()).toMatch(/needs its token/);
    await page.goto(`${base}/?token=${TOKEN}`);
    expect(new URL(page.url()).search).toBe('');
    await expect.poll(() => page.locator(`[data-node="${NODE}"]`).count()).toBe(1);
    await expect.poll(() => page.locator('#status').getAttribute('data-state')).toBe('live');
  });

  it('the numbers move while jobs run', async () => {
    const done = `[data-node="${NODE}"] [data-total="done"] b`;
    const before = Number(await cell(done));
    await client.enqueueMany(Array.from({ length: 12 }, () => ({ name: 'work', args: [150] })));
    // While they run: jobs waiting in the queue or reserved by the node, and the child busy with one.
    const held = async (): Promise<number> =>
      Number(await cell('[data-queue="default"] .waiting')) + Number(await cell('[data-queue="default"] .reserved'));
    await expect.poll(held).toBeGreaterThan(0);
    await expect.poll(() => page.locator(`[data-node="${NODE}"] tr[data-state="busy"]`).count()).toBe(1);
    await expect.poll(async () => Number(await cell(done))).toBe(before + 12);
    await expect.poll(held).toBe(0);
    await expect.poll(() => page.locator('#runtimes-table tr[data-task="work"]').count()).toBe(1);
  });

  it('an error message holding markup shows as text and runs nothing', async () => {
    const job = await client.enqueue('fails', [MARKUP]);
    await expect(job.result()).rejects.toThrow();
    await page.locator('[data-queue="default"] button[data-browse="dead"]').click();
    const row = page.locator(`#jobs-table tr[data-job-id="${job.id}"]`);
    await expect.poll(() => row.count()).toBe(1);
    expect(await row.locator('.reason').innerText()).toBe(MARKUP);
    await row.locator(`[data-job-link="${job.id}"]`).click();
    await expect.poll(() => page.locator('#job-detail .error-message').textContent()).toBe(MARKUP);
    expect(await page.evaluate(() => (globalThis as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(await page.locator('img[src="x"]').count()).toBe(0);
    expect(await page.locator('#job-detail script').count()).toBe(0);
  });

  it('a long task name is cut in the jobs table, not the page widened', async () => {
    const name = `t${'x'.repeat(600)}`;
    await client.enqueue(name, [], { queue: 'wide' });
    await expect.poll(() => page.locator('#jobs-queue option[value="wide"]').count()).toBe(1);
    await page.locator('#jobs-states button[data-state="waiting"]').click();
    await page.selectOption('#jobs-queue', 'wide');
    await expect.poll(() => page.locator('#jobs-table tbody tr').count()).toBe(1);
    // Run in the page (no DOM types here): the page's full width against the window's.
    const widths = await page.evaluate<number[]>('[document.documentElement.scrollWidth, window.innerWidth]');
    expect(widths[0]).toBeLessThanOrEqual(widths[1] as number);
  });

  it('next page stays shown when a refresh of the first page answers after it', async () => {
    // A queue no node consumes, of two pages.
    const ids = (
      await client.enqueueMany(
        Array.from({ length: 30 }, (_, i) => ({ name: 'work', args: [i], options: { queue: 'paging' } })),
      )
    ).map((j) => j.id);
    await expect.poll(() => page.locator('#jobs-queue option[value="paging"]').count()).toBe(1);
    await page.locator('#jobs-states button[data-state="waiting"]').click();
    await page.selectOption('#jobs-queue', 'paging');
    const firstId = () => page.locator('#jobs-table tbody tr').first().getAttribute('data-job-id');
    await expect.poll(firstId).toBe(ids[0]);
    // Hold the next refresh of the first page (no cursor) until page 2 is shown.
    const held: (() => Promise<void>)[] = [];
    let holding = true;
    await page.route(/\/api\/jobs\?/, async (route) => {
      const u = new URL(route.request().url());
      if (holding && u.searchParams.get('queue') === 'paging' && !u.searchParams.has('cursor'))
        return new Promise<void>((resolve) => held.push(() => route.continue().then(resolve)));
      return route.continue();
    });
    await expect.poll(() => held.length).toBeGreaterThan(0);
    await page.click('#jobs-next');
    await expect.poll(firstId).toBe(ids[25]);
    holding = false;
    const finished = held.map(() => page.waitForEvent('requestfinished', (r) => r.url().includes('queue=paging')));
    await Promise.all(held.map((release) => release()));
    await Promise.all(finished);
    // Two samples later (each would refresh a first page shown): page 2 is still shown.
    for (let i = 0; i < 2; i++) {
      const at = await page.locator('#status').innerText();
      await expect.poll(() => page.locator('#status').innerText()).not.toBe(at);
    }
    expect(await firstId()).toBe(ids[25]);
    await page.unroute(/\/api\/jobs\?/);
  });

  it('one job asked for after another is the one shown, whichever answers last', async () => {
    const [a, b] = await client.enqueueMany([
      { name: 'work', args: ['a'], options: { queue: 'paging' } },
      { name: 'work', args: ['b'], options: { queue: 'paging' } },
    ]);
    let release: () => void = () => undefined;
    const heldA = new Promise<void>((resolve) => (release = resolve));
    await page.route(/\/api\/job\?/, async (route) => {
      if (new URL(route.request().url()).searchParams.get('id') === a?.id) await heldA;
      return route.continue();
    });
    const shown = () => page.locator('#job-detail dl.job').getAttribute('data-job');
    const finishedA = page.waitForEvent('requestfinished', (r) => r.url().includes(`id=${a?.id ?? ''}`));
    await page.fill('#job-id', a?.id ?? '');
    await page.click('#job-find');
    await page.fill('#job-id', b?.id ?? '');
    await page.click('#job-find');
    await expect.poll(shown).toBe(b?.id);
    release();
    await finishedA;
    // Two samples later (A's answer is in by then): B is still shown.
    for (let i = 0; i < 2; i++) {
      const at = await page.locator('#status').innerText();
      await expect.poll(() => page.locator('#status').innerText()).not.toBe(at);
    }
    expect(await shown()).toBe(b?.id);
    await page.unroute(/\/api\/job\?/);
  });

  it("a dead job's retry button brings it back, and it succeeds", async () => {
    const job = await client.enqueue('failsOnce', ['e2e']);
    await expect(job.result()).rejects.toThrow(/first attempt of e2e fails/);
    await page.locator('[data-queue="default"] button[data-browse="dead"]').click();
    const row = page.locator(`#jobs-table tr[data-job-id="${job.id}"]`);
    await expect.poll(() => row.count()).toBe(1);
    await row.locator('button[data-action="retry"]').click();
    await expect.poll(() => page.locator('#messages .message').first().innerText()).toMatch(/requeued 1 dead job\(s\)/);
    await expect.poll(async () => (await client.handle(job.id).state())?.state).toBe('SUCCESS');
    await page.fill('#job-id', job.id);
    await page.click('#job-find');
    await expect.poll(() => page.locator('#job-detail dd[data-field="state"]').innerText()).toBe('SUCCESS');
    expect(await page.locator('#job-detail dd[data-field="value"]').innerText()).toBe('"e2e ok"');
  });

  it('the grow button adds a child: seen in the page and in prefork inspect stats', async () => {
    const card = page.locator(`[data-node="${NODE}"]`);
    expect(await card.getAttribute('data-processes')).toBe('1');
    await card.locator('button[data-action="grow"]').click();
    await expect.poll(() => page.locator('#messages .message').first().innerText()).toMatch(/OK, 2 processes \(\+1\)/);
    await expect.poll(() => page.locator(`[data-node="${NODE}"]`).getAttribute('data-processes')).toBe('2');
    await expect.poll(() => page.locator(`[data-node="${NODE}"] tr[data-pid]`).count()).toBe(2);
    const stats = spawnSync(process.execPath, [CLI, 'inspect', 'stats', '--json'], { env, encoding: 'utf8' });
    expect(stats.status).toBe(0);
    const [node] = JSON.parse(stats.stdout) as { node: string; stats: { pool: { processes: { state: string }[] } } }[];
    expect(node?.node).toBe(NODE);
    expect(node?.stats.pool.processes.filter((p) => p.state !== 'exited')).toHaveLength(2);
  });
});
