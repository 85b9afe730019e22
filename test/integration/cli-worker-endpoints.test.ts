/**
 * `prefork worker --metrics-port/--health-port`: the node serves /metrics,
 * /healthz and /readyz, says where in its log, and stops serving when it
 * exits; bad ports and hosts are usage errors (exit 2) naming the flag.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, emptyRedisDb, fixture } from '../helpers/worker.js';

const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const DB = 40;

const workers: ChildProcess[] = [];
afterEach(async () => {
  for (const w of workers.splice(0)) if (w.exitCode === null) w.kill('SIGKILL');
  await cleanup();
});

/** Sends `GET <target>` as typed (fetch would normalise it) and resolves the status line. */
function rawGet(base: string, target: string): Promise<string> {
  const { port } = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1', () =>
      socket.write(`GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`),
    );
    let got = '';
    socket.on('data', (d: Buffer) => (got += d.toString()));
    socket.on('close', () => resolve(got.split('\r\n')[0] ?? ''));
    socket.on('error', reject);
  });
}

function run(args: string[]): { code: number | null; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, stderr: r.stderr };
}

describe('prefork worker --metrics-port / --health-port', () => {
  it('serves metrics and probes where its log says, until it exits', async () => {
    const url = await emptyRedisDb(DB);
    const proc = spawn(
      process.execPath,
      [
        CLI,
        'worker',
        '--app',
        fixture('worker-tasks.mjs'),
        '--broker',
        url,
        '-c',
        '1',
        '--metrics-port',
        '0',
        '--metrics-host',
        '127.0.0.1',
        '--health-port',
        '0',
        '--health-host',
        '127.0.0.1',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    workers.push(proc);
    let out = '';
    proc.stdout.on('data', (c: Buffer) => (out += c.toString()));
    const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
    await expect.poll(() => out, { timeout: 30_000 }).toMatch(/^tasks \(\d+\): /m);
    const metrics = /serving \/metrics at (http:\/\/127\.0\.0\.1:\d+)/.exec(out)?.[1];
    const health = /serving \/healthz, \/readyz at (http:\/\/127\.0\.0\.1:\d+)/.exec(out)?.[1];
    expect(metrics).toBeDefined();
    expect(health).toBeDefined();

    const scraped = await fetch(`${metrics}/metrics`);
    expect(scraped.status).toBe(200);
    expect(await scraped.text()).toMatch(/^prefork_pool_processes 1$/m);
    await expect.poll(async () => (await fetch(`${health}/readyz`)).status).toBe(200);
    expect((await fetch(`${health}/healthz`)).status).toBe(200);
    expect((await fetch(`${health}/metrics`)).status).toBe(404);
    // A target Node's parser lets through but that is no URL: 400, and the node serves on.
    expect(await rawGet(health as string, '//')).toBe('HTTP/1.1 400 Bad Request');
    expect(await rawGet(metrics as string, '//:x/')).toBe('HTTP/1.1 400 Bad Request');
    expect((await fetch(`${health}/healthz`)).status).toBe(200);

    proc.kill('SIGTERM');
    expect(await exited).toBe(0);
    await expect(fetch(`${health}/healthz`)).rejects.toThrow();
  });

  it.each([
    [['--metrics-port', '70000'], /--metrics-port.*70000.*port number from 0 to 65535/],
    [['--health-port', 'http'], /--health-port.*http.*port number/],
    [
      ['--metrics-host', '127.0.0.1'],
      /invalid --metrics-host: "127\.0\.0\.1" \(expected to be left out without --metrics-port\)/,
    ],
    [
      ['--metrics-port', '9464', '--health-port', '9464', '--health-host', '127.0.0.1'],
      /invalid --health-host: .*one port serves both/,
    ],
  ])('refuses %j with exit 2 naming the flag', (flags, message) => {
    const r = run(['worker', '--app', fixture('worker-tasks.mjs'), '--broker', 'memory://', ...flags]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
  });
});
