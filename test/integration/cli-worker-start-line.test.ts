/**
 * What `prefork worker` prints as it starts, and as it fails to: its
 * banner, its tasks line and its fatal line. Each is one line a person or a
 * log shipper reads as it is: a name from a task module cannot break it,
 * a pool that starts with no child still lists its tasks, and a cause is
 * said once.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { cleanup, emptyRedisDb, fixture, spawnCliWorker } from '../helpers/worker.js';

const DB = 53;
let url = '';

beforeAll(async () => {
  url = await emptyRedisDb(DB);
});
afterEach(cleanup);

/** The line of `text` that starts with `prefix`. */
function lineStarting(text: string, prefix: string): string | undefined {
  return text.split('\n').find((line) => line.startsWith(prefix));
}

describe('prefork worker start line', () => {
  it('escapes the task names a module registers and the node name: a newline or an escape sequence stays on its line', async () => {
    const worker = spawnCliWorker([
      '--app',
      fixture('tasks-hostile-names.mjs'),
      '--broker',
      url,
      '-c',
      '1',
      '-n',
      'node\nname\u001b[2J',
    ]);
    await worker.ready;
    expect(worker.stdout().split('\n')[0]).toMatch(/^prefork worker node\\nname\\u001b\[2J \(pid \d+\) · broker /);
    await expect.poll(() => lineStarting(worker.stdout(), 'tasks (')).toBeDefined();
    const line = lineStarting(worker.stdout(), 'tasks (') as string;
    expect(line).toBe('tasks (3): line\\nbreak, plain, red\\u001b[31mtext');
    expect(worker.stdout()).not.toContain('\u001b');
    expect(await worker.stop()).toEqual({ code: 0, signal: null });
  });

  it('lists the tasks with --autoscale N,0: the pool starts one child to learn them', async () => {
    const worker = spawnCliWorker(['--app', fixture('tasks-hostile-names.mjs'), '--broker', url, '--autoscale', '2,0']);
    await worker.ready;
    await expect.poll(() => lineStarting(worker.stdout(), 'tasks')).toBeDefined();
    expect(lineStarting(worker.stdout(), 'tasks')).toBe('tasks (3): line\\nbreak, plain, red\\u001b[31mtext');
    expect(await worker.stop()).toEqual({ code: 0, signal: null });
  });

  it('with --autoscale N,0 a task module that does not load fails the start (exit 1), as with any other size', async () => {
    const worker = spawnCliWorker(['--app', fixture('syntax-error.mjs'), '--broker', url, '--autoscale', '2,0']);
    worker.ready.catch(() => undefined);
    // It gives up once the replacements keep failing (the restart limit): a hang, not a speed, bounds the wait.
    expect(await worker.exited).toEqual({ code: 1, signal: null });
    expect(worker.stdout()).toContain('worker failed to start: its task module does not load');
    expect(worker.stdout()).not.toContain('worker ready');
    expect(worker.stdout()).not.toMatch(/^tasks/m);
  }, 60_000);
});
