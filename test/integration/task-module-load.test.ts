/**
 * Task modules as people write them: one that does not load says where, once;
 * a TypeScript module runs with a loader and, without one, says how to add it.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { Pool, PoolFailedError } from 'prefork';
import { fixture, terminatePools } from '../helpers/pool.js';
import { captureLog, silent } from '../helpers/worker.js';

const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const pools: Pool[] = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.terminate()));
  await terminatePools();
});

function pool(options: ConstructorParameters<typeof Pool>[0]): Pool {
  const p = new Pool(options);
  pools.push(p);
  return p;
}

async function startFailure(p: Pool): Promise<PoolFailedError> {
  const err = await p.start().then(
    () => new Error('expected start() to reject'),
    (e: unknown) => e as Error,
  );
  expect(err).toBeInstanceOf(PoolFailedError);
  return err as PoolFailedError;
}

describe('a task module that does not load', () => {
  it('a syntax error: start() names the file, line and column, logged once (no "child died" per child)', async () => {
    const app = fixture('syntax-error.mjs');
    const { log, lines } = captureLog();
    const err = await startFailure(pool({ app, processes: 2, maxRestarts: 3, restartWindow: 60_000, logger: log }));
    expect(err.message).toContain(`SyntaxError: Unexpected token ';' at ${app}:4:16`);
    const loadLines = lines.filter((l) => String(l.msg).startsWith('cannot load task module'));
    expect(loadLines).toHaveLength(1);
    expect(loadLines[0]).toMatchObject({ level: 50 });
    expect(String(loadLines[0]!.msg)).toContain(`${app}:4:16`);
    expect(lines.filter((l) => l.msg === 'child died' && Number(l.level) >= 40)).toEqual([]);
    expect(lines.filter((l) => JSON.stringify(l).includes(`${app}:4:16`))).toEqual([loadLines[0]]);
  });

  it('a throw at the top level: the line of the throw', async () => {
    const app = fixture('throws-on-import.mjs');
    const err = await startFailure(pool({ app, processes: 1, maxRestarts: 1, restartWindow: 60_000, logger: silent }));
    expect(err.message).toContain(`fixture refuses to load: DATABASE_URL is not set at ${app}:4:7`);
  });

  it('a throw of something that cannot be read (a Proxy whose traps throw): start() says so, and why', async () => {
    const app = fixture('throws-unreadable-on-import.mjs');
    const err = await startFailure(pool({ app, processes: 1, maxRestarts: 1, restartWindow: 60_000, logger: silent }));
    expect(err.message).toContain(
      `cannot load task module ${app}: ErrorSerializationError: the value thrown cannot be read: reading its prototype threw: getPrototypeOf trap boom`,
    );
  });

  it('a TypeScript module without a loader: says how to add one', async () => {
    const app = fixture('tasks-typed.ts');
    const err = await startFailure(pool({ app, processes: 1, maxRestarts: 1, restartWindow: 60_000, logger: silent }));
    expect(err.message).toContain('--node-arg=--import=tsx');
    expect(err.message).toContain('execArgv');
  });
});

describe('prefork worker with a task module that does not load', () => {
  it('exits 1 after one error line naming the file, line and column, and a last line saying it did not start', () => {
    const app = fixture('syntax-error.mjs');
    const r = spawnSync(process.execPath, [CLI, 'worker', '--app', app, '--broker', 'memory://load-error', '-c', '2'], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(1);
    const lines = r.stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { level: number; msg: string });
    const where = lines.filter((l) => JSON.stringify(l).includes(`${app}:4:16`));
    expect(where).toEqual([
      expect.objectContaining({
        level: 50,
        msg: `cannot load task module ${app}: SyntaxError: Unexpected token ';' at ${app}:4:16`,
      }),
    ]);
    expect(lines.filter((l) => l.level >= 40 && l !== where[0]).map((l) => l.msg)).toEqual([
      'worker failed to start: its task module does not load (the error above says where)',
    ]);
  });
});

describe('a TypeScript task module', () => {
  it('runs with execArgv ["--import", "tsx"]', async () => {
    const p = pool({ app: fixture('tasks-typed.ts'), processes: 1, execArgv: ['--import', 'tsx'], logger: silent });
    await p.start();
    expect(await p.apply('add', [2, 3])).toBe(5);
    expect(await p.apply('total', [{ lines: [{ amount: 2 }, { amount: 40 }] }])).toBe(42);
    expect(await p.apply('whoami')).toBe('whoami');
  });
});
