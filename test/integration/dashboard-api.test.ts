/**
 * The dashboard's JSON routes, event stream and actions against a real
 * Redis (a database of this file's own) and a real worker: the token, the
 * read-only mode, paging without reading a queue whole, and each action
 * doing what its CLI command does.
 */
import { request, type IncomingHttpHeaders } from 'node:http';
import { connect } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { closeDashboards, getJson, makeDashboard, postAction } from '../helpers/dashboard.js';
import { CHART_QUEUES } from '../../dist/dashboard/history.js';
import { STREAMS_MAX } from '../../dist/dashboard/sse.js';
import { MAX_CONNECTIONS } from '../../dist/observe/http-listener.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';
import {
  captureLog,
  cleanup,
  countsOf,
  emptyRedisDb,
  fixture,
  makeClient,
  makeWorker,
  newLedger,
} from '../helpers/worker.js';

const DB = 48;
let url = '';

beforeEach(async () => {
  url = await emptyRedisDb(DB);
});
afterEach(async () => {
  await closeDashboards();
  await cleanup();
});

function startWorker(options: Record<string, unknown> = {}) {
  return makeWorker({ broker: url, app: fixture('tasks-dashboard.mjs'), ledger: newLedger(), ...options });
}

/** A job that failed for good on a running worker: in the dead set. */
async function deadJob(task: string, args: unknown[]): Promise<string> {
  const client = makeClient(url);
  const job = await client.enqueue(task, args);
  await expect(job.result()).rejects.toThrow();
  return job.id;
}

describe('dashboard API', { timeout: 60_000 }, () => {
  it('with a token, every path refuses a request without it, and takes the header or the cookie /?token= sets', async () => {
    const { url: base } = await makeDashboard(url, { authToken: 's3cret' });
    for (const path of ['/', '/api/overview', '/api/jobs?queue=default', '/api/stream', '/assets/app.js']) {
      const res = await fetch(`${base}${path}`);
      expect(res.status, path).toBe(401);
      expect(await res.text()).toMatch(/needs its token: open \/\?token=<token>/);
    }
    expect(await postAction(base, 'control', { command: 'ping' })).toMatchObject({
      status: 401,
      body: { ok: false, error: expect.stringMatching(/needs its token/) as unknown },
    });
    expect((await getJson(base, '/api/overview', { Authorization: 'Bearer wrong' })).status).toBe(401);
    // The scheme is case-insensitive, and may be followed by more than one space (RFC 9110 11.1).
    for (const header of ['Bearer s3cret', 'bearer s3cret', 'BEARER  s3cret'])
      expect((await getJson(base, '/api/overview', { Authorization: header })).status, header).toBe(200);
    expect((await getJson(base, '/api/overview', { Authorization: 'Bearer s3cre' })).status).toBe(401);
    const login = await fetch(`${base}/?token=s3cret`, { redirect: 'manual' });
    expect(login.status).toBe(303);
    expect(login.headers.get('location')).toBe('/');
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    expect(cookie).toBe('prefork_dashboard_token=s3cret');
    expect(login.headers.get('set-cookie')).toMatch(/HttpOnly; SameSite=Strict/);
    const page = await fetch(`${base}/`, { headers: { Cookie: cookie } });
    expect(page.status).toBe(200);
    expect(await page.text()).toMatch(/<title>prefork dashboard<\/title>/);
    expect((await fetch(`${base}/?token=wrong`, { redirect: 'manual' })).status).toBe(401);
  });

  it('read-only refuses every action with 403 and changes nothing', async () => {
    await startWorker().start();
    const id = await deadJob('fails', ['boom']);
    const { url: base } = await makeDashboard(url, { readOnly: true });
    const overview = await getJson(base, '/api/overview');
    expect(overview.body.config).toMatchObject({ readOnly: true });
    for (const [name, body] of [
      ['dead-retry', { id }],
      ['dead-delete', { id }],
      ['revoke', { id }],
      ['control', { command: 'grow', args: ['1'] }],
      ['control', { command: 'pause', args: ['default'] }],
    ] as const) {
      const r = await postAction(base, name, body);
      expect(r.status, name).toBe(403);
      expect(r.body.error).toMatch(/read-only/);
    }
    expect(await countsOf(makeClient(url), ['default'])).toEqual([
      { queue: 'default', waiting: 0, reserved: 0, delayed: 0, dead: 1 },
    ]);
    const dead = await getJson(base, '/api/jobs?queue=default&state=dead');
    expect((dead.body.jobs as { id: string }[]).map((j) => j.id)).toEqual([id]);
  });

  it('pages a queue in fetch order with a cursor, never more than the limit; bad parameters are 400 naming them', async () => {
    const client = makeClient(url);
    const ids = (await client.enqueueMany(Array.from({ length: 60 }, (_, i) => ({ name: 'work', args: [i] })))).map(
      (h) => h.id,
    );
    const { url: base } = await makeDashboard(url);
    const seen: string[] = [];
    const sizes: number[] = [];
    let cursor: string | null = null;
    do {
      const query: string = `/api/jobs?queue=default&state=waiting&limit=25${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`;
      const page = await getJson(base, query);
      expect(page.status).toBe(200);
      const jobs = page.body.jobs as { id: string; task: string; args: unknown[] }[];
      sizes.push(jobs.length);
      seen.push(...jobs.map((j) => j.id));
      expect(jobs[0]).toMatchObject({ task: 'work' });
      cursor = page.body.next as string | null;
    } while (cursor !== null);
    expect(sizes).toEqual([25, 25, 10]);
    expect(seen).toEqual(ids);
    for (const [query, named] of [
      ['queue=default&limit=0', 'limit'],
      ['queue=default&limit=abc', 'limit'],
      ['queue=default&state=bogus', 'state'],
      ['queue=a%20b', 'queue'],
      ['state=waiting', 'queue'],
      ['queue=default&cursor=not-a-cursor', 'cursor'],
    ]) {
      const r = await getJson(base, `/api/jobs?${query}`);
      expect(r.status, query).toBe(400);
      expect(r.body.error, query).toMatch(new RegExp(`invalid option ${named}`));
    }
  });

  it('a bad page limit, or one past 100, is named as it was sent (not NaN, not a rounded number)', async () => {
    const { url: base } = await makeDashboard(url);
    // Past 100 too: a page holds every job's arguments whole (the 10,000 `prefork jobs` takes would be gigabytes).
    for (const limit of ['-1', 'abc', '1.5', '99999999999999999999', '101', '10000']) {
      const r = await getJson(base, `/api/jobs?queue=default&limit=${limit}`);
      expect(r.status, limit).toBe(400);
      expect(r.body.error, limit).toBe(`invalid option limit: "${limit}" (expected an integer from 1 to 100)`);
    }
    expect((await getJson(base, '/api/jobs?queue=default&limit=100')).status).toBe(200);
  });

  it('one job: its record with args, progress, value and the events seen; an unknown id is 404, a missing one 400', async () => {
    await startWorker().start();
    const { url: base } = await makeDashboard(url);
    const client = makeClient(url);
    const job = await client.enqueue('work', [40]);
    expect(await job.result()).toBe(40);
    await expect
      .poll(async () => {
        const r = await getJson(base, `/api/job?id=${job.id}`);
        return (r.body.history as { type: string }[]).map((s) => s.type);
      })
      .toEqual(expect.arrayContaining(['job-received', 'job-started', 'job-succeeded']));
    const r = await getJson(base, `/api/job?id=${job.id}`);
    expect(r).toMatchObject({
      status: 200,
      body: { id: job.id, task: 'work', state: 'SUCCESS', args: [40], value: 40, progress: { half: true } },
    });
    expect(await getJson(base, '/api/job?id=no-such-job')).toMatchObject({
      status: 404,
      body: { id: 'no-such-job', state: 'PENDING', unknown: true },
    });
    expect((await getJson(base, '/api/job')).status).toBe(400);
  });

  it('one job whose value JSON has no type for (a BigInt past 64 bits, bytes): written as prefork result --json does', async () => {
    await startWorker().start();
    const { url: base } = await makeDashboard(url);
    const client = makeClient(url);
    const job = await client.enqueue('echo', [{ big: 2n ** 70n, bytes: Buffer.from('hi') }]);
    await job.result();
    const r = await getJson(base, `/api/job?id=${job.id}`);
    expect(r).toMatchObject({
      status: 200,
      body: { id: job.id, state: 'SUCCESS', value: { big: '1180591620717411303424', bytes: 'aGk=' } },
    });
  });

  it('dead-retry puts a dead job back and it succeeds; dead-delete drops one; an id not dead says so', async () => {
    await startWorker().start();
    const client = makeClient(url);
    const first = client.handle((await client.enqueue('failsOnce', ['k1'])).id);
    await expect(first.result()).rejects.toThrow(/first attempt of k1 fails/);
    const other = await deadJob('fails', ['gone']);
    const { url: base } = await makeDashboard(url);
    const retried = await postAction(base, 'dead-retry', { id: first.id });
    expect(retried).toMatchObject({ status: 200, body: { ok: true, count: 1, lines: ['requeued 1 dead job(s)'] } });
    await expect.poll(async () => (await first.state())?.state).toBe('SUCCESS');
    expect((await first.state())?.value).toBe('k1 ok');
    const deleted = await postAction(base, 'dead-delete', { id: other, queue: 'default' });
    expect(deleted).toMatchObject({ status: 200, body: { ok: true, count: 1 } });
    expect(await countsOf(client, ['default'])).toEqual([
      { queue: 'default', waiting: 0, reserved: 0, delayed: 0, dead: 0 },
    ]);
    const again = await postAction(base, 'dead-delete', { id: other });
    expect(again).toMatchObject({ status: 200, body: { ok: false, count: 0, notDead: [other] } });
    expect((await postAction(base, 'dead-retry', {})).body.error).toMatch(/invalid option id/);
  });

  it('revoke, pause and resume, grow and shrink go through the same control as the CLI', async () => {
    const worker = startWorker({ concurrency: 1 });
    await worker.start();
    const { url: base } = await makeDashboard(url);
    const client = makeClient(url);
    const later = await client.enqueue('work', [1], { delay: '1h' });
    const revoked = await postAction(base, 'revoke', { id: later.id });
    expect(revoked).toMatchObject({
      status: 200,
      body: { ok: true, outcomes: [{ id: later.id, outcome: 'revoked' }] },
    });
    expect((await later.state())?.state).toBe('REVOKED');

    const grown = await postAction(base, 'control', { command: 'grow', args: ['1'], node: worker.nodeId });
    expect(grown).toMatchObject({ status: 200, body: { ok: true } });
    expect((grown.body.lines as string[])[0]).toMatch(/OK, 2 processes \(\+1\)/);
    await expect.poll(() => worker.stats().pool.processes.filter((p) => p.state !== 'exited').length).toBe(2);
    const shrunk = await postAction(base, 'control', { command: 'shrink', args: ['1'] });
    expect(shrunk).toMatchObject({ status: 200, body: { ok: true } });

    const paused = await postAction(base, 'control', { command: 'pause', args: ['default'] });
    expect(paused.body).toMatchObject({ ok: true });
    expect((paused.body.lines as string[])[0]).toMatch(/queue 'default' paused on every node/);
    expect(worker.stats().paused).toEqual(['default']);
    await expect
      .poll(async () => {
        const snapshot = (await getJson(base, '/api/overview')).body.snapshot as {
          queues: { queue: string; paused: boolean }[];
        };
        return snapshot.queues.find((q) => q.queue === 'default')?.paused;
      })
      .toBe(true);
    expect((await postAction(base, 'control', { command: 'resume', args: ['default'] })).body).toMatchObject({
      ok: true,
    });
    expect(worker.stats().paused).toEqual([]);

    const bad = await postAction(base, 'control', { command: 'grow', args: ['0'] });
    expect(bad).toMatchObject({ status: 400, body: { ok: false } });
    expect(bad.body.error).toMatch(/control grow: argument '0' is invalid/);
    expect((await postAction(base, 'control', { command: 'grow', args: ['1'], node: 'nobody' })).status).toBe(404);
    expect((await postAction(base, 'no-such', {})).status).toBe(404);
  });

  it('an action needs a JSON body: a form post (a cross-site request) is refused', async () => {
    await startWorker().start();
    const { url: base } = await makeDashboard(url);
    const res = await fetch(`${base}/api/actions/control`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'command=shutdown',
    });
    expect(res.status).toBe(403);
    const notJson = await fetch(`${base}/api/actions/control`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{"command":',
    });
    expect(notJson.status).toBe(400);
    // The media type in any case is JSON (the body is read: 400 for its bad JSON, not 403).
    const upper = await fetch(`${base}/api/actions/control`, {
      method: 'POST',
      headers: { 'Content-Type': 'Application/JSON; charset=UTF-8' },
      body: '{"command":',
    });
    expect(upper.status).toBe(400);
  });

  it.each(['127.0.0.1', '127.0.0.2'])(
    'bound to %s, it refuses a request addressed to another host name (DNS rebinding)',
    async (bind) => {
      const { url: base } = await makeDashboard(url, { host: bind });
      const { port } = new URL(base);
      const status = (host: string): Promise<number | undefined> =>
        new Promise((resolve, reject) => {
          const req = request({ host: bind, port, path: '/api/overview', headers: { Host: host } }, (res) => {
            res.resume();
            resolve(res.statusCode);
          });
          req.on('error', reject);
          req.end();
        });
      expect(await status(`evil.example:${port}`)).toBe(403);
      expect(await status(`${bind}:${port}`)).toBe(200);
      expect(await status(`localhost:${port}`)).toBe(200);
    },
  );

  it('the event stream sends a snapshot at once and another per sample, with the counts moving', async () => {
    await startWorker().start();
    const { url: base } = await makeDashboard(url);
    const res = await fetch(`${base}/api/stream`);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let text = '';
    const snapshots: { nodes: { stats?: { pool: { totals: { done: number } } } }[] }[] = [];
    const client = makeClient(url);
    await client.enqueueMany(Array.from({ length: 5 }, () => ({ name: 'work', args: [10] })));
    while (!snapshots.some((s) => s.nodes[0]?.stats?.pool.totals.done === 5)) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
      let end;
      while ((end = text.indexOf('\n\n')) >= 0) {
        const frame = text.slice(0, end);
        text = text.slice(end + 2);
        const data = /^event: snapshot\ndata: (.*)$/m.exec(frame)?.[1];
        if (data !== undefined) snapshots.push(JSON.parse(data) as (typeof snapshots)[number]);
      }
    }
    await reader.cancel();
    expect(snapshots.length).toBeGreaterThan(1);
    expect(snapshots.at(-1)?.nodes[0]?.stats?.pool.totals.done).toBe(5);
  });

  it('the charts history holds the waiting jobs of the first queues the chart draws, not every queue of the table', async () => {
    const names = Array.from({ length: CHART_QUEUES + 5 }, (_, i) => `q${String(i).padStart(2, '0')}`);
    await makeClient(url).enqueueMany(names.map((queue) => ({ name: 'work', args: [1], options: { queue } })));
    const { url: base } = await makeDashboard(url);
    // A few samples in, each holding every queue's counts or only the charted ones.
    await expect
      .poll(async () => ((await getJson(base, '/api/overview')).body.history as unknown[]).length)
      .toBeGreaterThan(2);
    const { body } = await getJson(base, '/api/overview');
    const snapshot = body.snapshot as { queues: { queue: string }[] };
    expect(snapshot.queues.map((q) => q.queue)).toEqual(names);
    const charted = names.slice(0, CHART_QUEUES).map((queue) => ({ queue, waiting: 1 }));
    for (const sample of body.history as { queues: unknown[] }[]) expect(sample.queues).toEqual(charted);
  });
});

/** A request through node:http (what fetch cannot send: a declared length it never sends, a HEAD it reads to the end). */
function send(
  base: string,
  options: { method: string; path: string; headers?: Record<string, string>; body?: Buffer },
): Promise<{ status: number | undefined; headers: IncomingHttpHeaders; text: string }> {
  const { port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({
      host: '127.0.0.1',
      port,
      method: options.method,
      path: options.path,
      headers: options.headers,
    });
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        resolve({ status: res.statusCode, headers: res.headers, text });
        req.destroy();
      });
    });
    req.on('error', reject);
    if (options.body !== undefined) req.write(options.body);
    req.flushHeaders();
  });
}

describe('dashboard requests from outside', { timeout: 60_000 }, () => {
  it('an action body over 64 KiB is answered 413 naming the limit (streamed or declared), and the server serves on', async () => {
    const { url: base } = await makeDashboard(url);
    const streamed = await send(base, {
      method: 'POST',
      path: '/api/actions/revoke',
      headers: { 'Content-Type': 'application/json' },
      body: Buffer.alloc(64 * 1024 + 1, 'x'),
    });
    expect(streamed.status).toBe(413);
    expect(JSON.parse(streamed.text)).toMatchObject({
      ok: false,
      error: expect.stringMatching(/over 65536 bytes/) as unknown,
    });
    const declared = await send(base, {
      method: 'POST',
      path: '/api/actions/control',
      headers: { 'Content-Type': 'application/json', 'Content-Length': String(1024 * 1024) },
    });
    expect(declared.status).toBe(413);
    expect(declared.headers.connection).toBe('close');
    expect(JSON.parse(declared.text)).toEqual({
      ok: false,
      error: 'the body is over 65536 bytes (an action takes a JSON object of a few fields)',
    });
    expect((await getJson(base, '/api/overview')).status).toBe(200);
  });

  it('an asker gone mid-body is logged at debug, not as the dashboard failing: no asker can fill the error log', async () => {
    const { log, lines } = captureLog();
    const { url: base } = await makeDashboard(url, { logger: log });
    const { port } = new URL(base);
    const socket = connect(Number(port), '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(
      'POST /api/actions/control HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
        'Content-Length: 100\r\n\r\n{"command":"shut',
    );
    socket.destroy();
    const about = () => lines.filter((l) => String(l.msg).includes('/api/actions/control'));
    await expect.poll(() => about().length).toBeGreaterThan(0);
    expect(about()).toMatchObject([
      { level: 20, msg: expect.stringMatching(/ended before its body came whole/) as unknown },
    ]);
    expect(lines.filter((l) => (l.level as number) >= 40)).toEqual([]);
    expect((await getJson(base, '/api/overview')).status).toBe(200);
  });

  it('while Redis is away a route and an action answer 503 naming the broker, and 200 once it is back', async () => {
    const proxy = await TcpProxy.start(url);
    try {
      const { url: base } = await makeDashboard(`${proxy.url}/${DB}`);
      expect((await getJson(base, '/api/jobs?queue=default')).status).toBe(200);
      proxy.setMode('refuse');
      proxy.dropAll();
      // Not 500 "see the log" with ioredis's "max retries per request" inside: the reason, to the asker.
      const away = /^cannot connect to the broker at redis:\/\/127\.0\.0\.1:\d+\/48: ./;
      const page = await getJson(base, '/api/jobs?queue=default');
      expect(page).toMatchObject({ status: 503, body: { ok: false, error: expect.stringMatching(away) as unknown } });
      const revoke = await postAction(base, 'revoke', { id: 'some-job' });
      expect(revoke).toMatchObject({ status: 503, body: { ok: false, error: expect.stringMatching(away) as unknown } });
      proxy.setMode('forward');
      await expect.poll(async () => (await getJson(base, '/api/jobs?queue=default')).status).toBe(200);
    } finally {
      await closeDashboards();
      await proxy.close();
    }
  });

  it('a request target that is no URL (//) is answered 400 before the guard, and the server serves on', async () => {
    const { url: base } = await makeDashboard(url, { authToken: 's3cret' });
    for (const path of ['//', '//:x/api/overview']) {
      const r = await send(base, { method: 'GET', path });
      expect(r.status, path).toBe(400);
      expect(r.text, path).toBe(`bad request target: ${JSON.stringify(path)} (a path such as /)\n`);
    }
    expect((await getJson(base, '/api/overview', { Authorization: 'Bearer s3cret' })).status).toBe(200);
  });

  it('HEAD on every GET path answers its status and headers and ends, the event stream included', async () => {
    const { url: base } = await makeDashboard(url);
    for (const [path, type] of [
      ['/', 'text/html'],
      ['/api/overview', 'application/json'],
      ['/assets/app.js', 'text/javascript'],
      ['/api/stream', 'text/event-stream'],
    ] as const) {
      const head = await send(base, { method: 'HEAD', path });
      expect(head.status, path).toBe(200);
      expect(head.headers['content-type'], path).toMatch(new RegExp(`^${type}`));
      expect(head.text, path).toBe('');
    }
    expect((await getJson(base, '/api/overview')).status).toBe(200);
  });

  it('an event stream nobody reads is dropped once its backlog grows, and the streams that read go on', async () => {
    // Snapshots of about 1 MB (100 queues with long names): a few fill what the kernel holds for a socket.
    const client = makeClient(url);
    await client.enqueueMany(
      Array.from({ length: 100 }, (_, i) => ({
        name: 'work',
        args: [i],
        options: { queue: `q${i}-${'n'.repeat(4000)}` },
      })),
    );
    const { url: base } = await makeDashboard(url);
    const { port } = new URL(base);
    const stalled = connect(Number(port), '127.0.0.1');
    let closed = false;
    stalled.on('close', () => (closed = true));
    stalled.on('error', () => undefined);
    stalled.write('GET /api/stream HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    stalled.pause();
    // While it reads nothing, another stream takes 30 snapshots (some 30 MB), each of them as it comes.
    const res = await fetch(`${base}/api/stream`);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let snapshots = 0;
    let tail = '';
    while (snapshots < 30) {
      const { value, done } = await reader.read();
      if (done) break;
      const parts = (tail + decoder.decode(value, { stream: true })).split('event: snapshot\n');
      snapshots += parts.length - 1;
      // Shorter than the marker: a marker split across two reads is counted once.
      tail = (parts.at(-1) ?? '').slice(-15);
    }
    await reader.cancel();
    expect(snapshots).toBe(30);
    // The dashboard let go of the stalled stream: read now, it ends after what the kernel held.
    stalled.on('data', () => undefined);
    stalled.resume();
    await expect.poll(() => closed).toBe(true);
  });
  it('past STREAMS_MAX event streams one more is 503 and closed, so pages and actions still get through', async () => {
    const { url: base } = await makeDashboard(url);
    const { port } = new URL(base);
    // As many streams as the server holds connections: each page open on the dashboard holds one.
    const sockets = Array.from({ length: MAX_CONNECTIONS }, () => connect(Number(port), '127.0.0.1'));
    const statuses = await Promise.all(
      sockets.map(
        (s) =>
          new Promise<string>((resolve) => {
            s.on('error', () => resolve('error'));
            s.on('close', () => resolve('closed'));
            s.once('data', (d: Buffer) => resolve(d.toString().split('\r\n')[0] ?? ''));
            s.write('GET /api/stream HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
          }),
      ),
    );
    try {
      expect(statuses.filter((s) => s === 'HTTP/1.1 200 OK')).toHaveLength(STREAMS_MAX);
      expect(statuses.filter((s) => s === 'HTTP/1.1 503 Service Unavailable')).toHaveLength(
        MAX_CONNECTIONS - STREAMS_MAX,
      );
      expect((await getJson(base, '/api/overview')).status).toBe(200);
      expect((await postAction(base, 'control', { command: 'ping' })).status).toBe(404);
      const refused = await send(base, { method: 'GET', path: '/api/stream' });
      expect(refused).toMatchObject({
        status: 503,
        headers: { 'retry-after': '10', connection: 'close' },
        text: `${STREAMS_MAX} event streams are open already: try again in 10 s\n`,
      });
      // A page that closes leaves its place to another.
      const open = sockets[statuses.indexOf('HTTP/1.1 200 OK')];
      open?.destroy();
      await expect.poll(async () => (await fetch(`${base}/api/stream`, { method: 'HEAD' })).status).toBe(200);
      await expect
        .poll(async () => {
          const res = await fetch(`${base}/api/stream`);
          void res.body?.cancel();
          return res.status;
        })
        .toBe(200);
    } finally {
      for (const s of sockets) s.destroy();
    }
  });

  it('another method than POST on an action is 405 with Allow: POST; a cross-site preflight is granted nothing', async () => {
    const { url: base } = await makeDashboard(url);
    for (const method of ['GET', 'HEAD', 'PUT', 'DELETE']) {
      const res = await send(base, { method, path: '/api/actions/control' });
      expect(res.status, method).toBe(405);
      expect(res.headers.allow, method).toBe('POST');
      if (method !== 'HEAD')
        expect(JSON.parse(res.text), method).toEqual({
          ok: false,
          error: `${method} not allowed on /api/actions/control: an action is a POST with a JSON body`,
        });
    }
    const preflight = await send(base, {
      method: 'OPTIONS',
      path: '/api/actions/revoke',
      headers: {
        Origin: 'http://evil.example',
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'content-type',
      },
    });
    expect(preflight.status).toBe(405);
    expect(preflight.headers.allow).toBe('POST');
    expect(Object.keys(preflight.headers).filter((h) => h.startsWith('access-control-'))).toEqual([]);
    expect((await send(base, { method: 'GET', path: '/api/actions/no-such' })).status).toBe(404);
  });
  it('a query parameter given twice is 400 naming it, not half read', async () => {
    const { url: base } = await makeDashboard(url);
    for (const [query, error] of [
      ['/api/jobs?queue=default&queue=other', 'invalid option queue: ["default","other"] (expected one value, not 2)'],
      ['/api/jobs?queue=default&limit=5&limit=50', 'invalid option limit: ["5","50"] (expected one value, not 2)'],
      ['/api/job?id=a&id=b&id=c', 'invalid option id: ["a","b","c"] (expected one value, not 3)'],
    ]) {
      expect(await getJson(base, query as string), query).toEqual({ status: 400, body: { ok: false, error } });
    }
  });
  it('percent-encoding or a body that is not UTF-8 is 400 naming the parameter or the body, not read as U+FFFD', async () => {
    const { url: base } = await makeDashboard(url);
    expect(await getJson(base, '/api/job?id=%E0%A4%A')).toEqual({
      status: 400,
      body: {
        ok: false,
        error: 'invalid option id: "id=%E0%A4%A" (expected percent-encoded UTF-8 (e.g. %C3%A9 for é))',
      },
    });
    const cursor = await getJson(base, '/api/jobs?queue=default&cursor=%FF');
    expect(cursor.status).toBe(400);
    expect(cursor.body.error).toMatch(/^invalid option cursor: "cursor=%FF" \(expected percent-encoded UTF-8/);
    expect((await getJson(base, '/api/job?id=%C3%A9')).body).toMatchObject({ id: 'é', unknown: true });
    const body = Buffer.concat([Buffer.from('{"id":"'), Buffer.from([0xe0, 0xa4]), Buffer.from('"}')]);
    const revoke = await send(base, {
      method: 'POST',
      path: '/api/actions/revoke',
      headers: { 'Content-Type': 'application/json', 'Content-Length': String(body.byteLength) },
      body,
    });
    expect(revoke.status).toBe(400);
    expect(JSON.parse(revoke.text)).toEqual({
      ok: false,
      error: 'invalid option body: "11 bytes" (expected JSON in UTF-8)',
    });
  });
  it('a query parameter a route does not take is 400 naming it and the ones it takes (the token aside)', async () => {
    const { url: base } = await makeDashboard(url, { authToken: 't' });
    for (const [query, error] of [
      [
        '/api/jobs?queue=default&limt=5',
        'invalid option limt: "5" (expected a known parameter: queue, state, limit, cursor)',
      ],
      ['/api/job?id=x&__proto__=1', 'invalid option __proto__: "1" (expected a known parameter: id)'],
      ['/api/overview?constructor=', 'invalid option constructor: "" (expected no query parameter here)'],
    ]) {
      expect(await getJson(base, `${query}&token=t`), query).toEqual({ status: 400, body: { ok: false, error } });
    }
    expect((await getJson(base, '/api/overview?token=t')).status).toBe(200);
    expect((await getJson(base, '/api/jobs?queue=default&token=t')).status).toBe(200);
  });
  it('an empty node or queue in an action is 400, never read as "every node" or "every queue"', async () => {
    const worker = startWorker();
    await worker.start();
    const { url: base } = await makeDashboard(url);
    expect(await postAction(base, 'control', { command: 'shutdown', node: '' })).toEqual({
      status: 400,
      body: { ok: false, error: 'invalid option node: "" (expected a non-empty string, or no node field)' },
    });
    expect(worker.stats().pool.processes.some((p) => p.state !== 'exited')).toBe(true);
    expect(await postAction(base, 'dead-delete', { id: 'x', queue: '' })).toEqual({
      status: 400,
      body: { ok: false, error: 'invalid option queue: "" (expected a non-empty string, or no queue field)' },
    });
    // Left out (or null), each still means every node, every queue.
    expect(await postAction(base, 'control', { command: 'ping', node: null })).toMatchObject({
      status: 200,
      body: { ok: true },
    });
  });
});
