// A throwaway redis-server for tests and benches: installed with apt-get when
// missing, started on a free loopback port with no persistence, stopped and
// restarted on demand (the "Redis restarted mid-run" test).
import { execFileSync, spawn } from 'node:child_process';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';

/** Installs redis-server with apt-get when it is not on PATH (the test machines run as root). */
export function ensureRedisInstalled() {
  try {
    execFileSync('redis-server', ['--version'], { stdio: 'ignore' });
    return;
  } catch {
    // not installed: fall through
  }
  execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit' });
  execFileSync('apt-get', ['install', '-y', 'redis-server'], {
    stdio: 'inherit',
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
}

/** A free TCP port on 127.0.0.1: listen on port 0, read the port, close. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** Sends PING in RESP and resolves true when +PONG comes back. */
function ping(port) {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    let reply = '';
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.on('error', () => done(false));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      reply += chunk.toString();
      if (reply.includes('\r\n')) done(reply.startsWith('+PONG'));
    });
  });
}

async function waitUntil(check, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`redis-server: timed out waiting until ${what}`);
}

/**
 * Starts redis-server on `port` (default: a free one), with `args` added to
 * its command line (e.g. ['--proto-max-bulk-len', '1mb']), and resolves once
 * it answers PING. Returns { url, port, stop(), restart(), pause(), resume() }.
 */
export async function startRedisServer({ port, args = [] } = {}) {
  ensureRedisInstalled();
  const chosen = port ?? (await freePort());
  let child;
  let stderr = '';

  const launch = async () => {
    stderr = '';
    child = spawn(
      'redis-server',
      [
        '--port',
        String(chosen),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
        // Any file it still writes (a replica sync, a SAVE a test sends) lands outside the checkout.
        '--dir',
        tmpdir(),
        '--daemonize',
        'no',
        // Test files that need a database of their own each take a number (test/unit/redis-db-numbers.test.ts).
        '--databases',
        '64',
        ...args,
      ],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    child.stderr.on('data', (d) => (stderr += d.toString()));
    const exited = new Promise((resolve) => child.once('exit', resolve));
    const up = waitUntil(() => ping(chosen), 15_000, `it answers PING on port ${chosen}`);
    const outcome = await Promise.race([up.then(() => 'up'), exited.then(() => 'exited')]);
    if (outcome === 'exited') throw new Error(`redis-server exited at start on port ${chosen}: ${stderr.trim()}`);
  };

  const stop = async () => {
    const current = child;
    if (!current || current.exitCode !== null || current.signalCode !== null) return;
    const exited = new Promise((resolve) => current.once('exit', resolve));
    current.kill('SIGTERM');
    current.kill('SIGCONT'); // a paused server takes the SIGTERM once it runs again
    const timer = setTimeout(() => current.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  };

  await launch();
  return {
    url: `redis://127.0.0.1:${chosen}`,
    port: chosen,
    stop,
    async restart() {
      await stop();
      await launch();
    },
    // Frozen, not gone: its connections stay open and nothing answers (SIGSTOP), until resume() (SIGCONT).
    pause() {
      child.kill('SIGSTOP');
    },
    resume() {
      child.kill('SIGCONT');
    },
  };
}
