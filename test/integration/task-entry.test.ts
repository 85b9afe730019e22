import { execFileSync } from 'node:child_process';
import { afterEach, describe, expect, inject, it } from 'vitest';
import * as light from 'prefork/task';
import * as full from 'prefork';
import { fixture, startPool, terminatePools } from '../helpers/pool.js';

afterEach(terminatePools);

/** The CommonJS packages a fresh Node process has loaded after importing `specifier` (and running `then`). */
function packagesLoadedBy(specifier: string, then = ''): string[] {
  const script = `import * as entry from ${JSON.stringify(specifier)}; import { createRequire } from 'node:module';
    ${then}
    const cache = createRequire(import.meta.url).cache;
    console.log(JSON.stringify([...new Set(Object.keys(cache).map((p) => /node_modules\\/((?:@[^/]+\\/)?[^/]+)/.exec(p)?.[1]).filter(Boolean))]));`;
  return JSON.parse(
    execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: fixture('.'), encoding: 'utf8' }),
  ) as string[];
}

describe("the light entry 'prefork/task'", () => {
  it('exports what a task module needs, the same objects as the full entry', () => {
    expect(light.defineTasks).toBe(full.defineTasks);
    expect(light.currentTask).toBe(full.currentTask);
    expect(light.Retry).toBe(full.Retry);
    expect(light.SoftTimeLimitExceeded).toBe(full.SoftTimeLimitExceeded);
    expect(light.OptionError).toBe(full.OptionError);
    expect('Pool' in light || 'Client' in light || 'Worker' in light).toBe(false);
  });

  it('loads neither ioredis nor pino, where the full entry loads pino', () => {
    expect(packagesLoadedBy('prefork')).toEqual(expect.arrayContaining(['pino']));
    expect(packagesLoadedBy('prefork/task')).toEqual([]);
  });

  it('the full entry loads ioredis only when a Redis broker connects (the Pool alone never does)', () => {
    expect(packagesLoadedBy('prefork')).not.toContain('ioredis');
    expect(packagesLoadedBy('prefork/broker', "entry.createBroker('memory://light');")).not.toContain('ioredis');
    const connect = `const broker = entry.createBroker(${JSON.stringify(inject('redisUrl'))});
      await broker.connect(); await broker.close();`;
    expect(packagesLoadedBy('prefork/broker', connect)).toContain('ioredis');
  });

  it('a child running a task module on it has loaded neither ioredis nor pino', async () => {
    const pool = await startPool({ app: fixture('tasks-light.mjs'), processes: 1 });
    expect(await pool.apply('whoami', [])).toBe('whoami');
    expect(await pool.apply('classes', [])).toEqual(['function', 'function']);
    const loaded = (await pool.apply('loadedPackages', [])) as string[];
    expect(loaded).not.toContain('ioredis');
    expect(loaded).not.toContain('pino');
  });
});
