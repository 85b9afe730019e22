import { describe, expect, it } from 'vitest';
import { currentTask, defineTasks, InvalidStateError, OptionError } from 'prefork';

describe('defineTasks', () => {
  it('registers plain functions and { run, ...options } entries, with their options resolved', () => {
    const echo = (x: unknown): unknown => x;
    const resize = (): number => 1;
    const registry = defineTasks({ echo, resize: { run: resize, retries: 3, timeLimit: '1m', softTimeLimit: 500 } });
    expect([...registry.tasks.keys()]).toEqual(['echo', 'resize']);
    expect(registry.tasks.get('echo')).toBe(echo);
    expect(registry.tasks.get('resize')).toBe(resize);
    expect(registry.options.get('resize')).toEqual({ retries: 3, timeLimit: 60_000, softTimeLimit: 500 });
    expect(registry.options.get('echo')).toBeUndefined();
  });

  it.each<[unknown, string]>([
    [{ broken: 42 }, 'broken'],
    [{ broken: { retries: 1 } }, 'broken'],
    [{ t: { run: () => 1, retries: -1 } }, 'retries'],
    [{ t: { run: () => 1, retries: 1.5 } }, 'retries'],
    [{ t: { run: () => 1, timeLimit: 'soon' } }, 'timeLimit'],
    [{ t: { run: () => 1, softTimeLimit: 0 } }, 'softTimeLimit'],
    [{ t: { run: () => 1, retires: 3 } }, 'retires'],
    [{ t: { run: () => 1, retries: '3' } }, 'retries'],
    [{ t: { run: () => 1, timeLimit: '25d' } }, 'task "t": invalid option timeLimit: "25d"'],
    [{ t: { run: () => 1, softTimeLimit: 2 ** 31 } }, `task "t": invalid option softTimeLimit: ${2 ** 31}`],
    [{ t: { run: () => 1, timeLimit: '1s', softTimeLimit: '1s' } }, 'task "t": invalid option softTimeLimit: "1s"'],
    [{ t: { run: () => 1, backoff: 5 } }, 'task "t": invalid option backoff: 5'],
    [{ t: { run: () => 1, backoff: { delay: 'later' } } }, 'task "t": invalid option backoff.delay: "later"'],
    [{ t: { run: () => 1, backoff: { cap: -1 } } }, 'task "t": invalid option backoff.cap: -1'],
    [{ t: { run: () => 1, backoff: { type: 'linear' } } }, 'task "t": invalid option backoff.type: "linear"'],
    [{ t: { run: () => 1, backoff: { base: 10 } } }, 'task "t": invalid option backoff.base: 10'],
  ])('rejects %j with an OptionError naming %s', (tasks, named) => {
    expect(() => defineTasks(tasks as never)).toThrow(OptionError);
    expect(() => defineTasks(tasks as never)).toThrow(named);
  });

  it('turns backoff durations given as strings into ms', () => {
    const registry = defineTasks({
      t: { run: () => 1, backoff: { type: 'fixed', delay: '2s', cap: '1m', jitter: false } },
    });
    expect(registry.options.get('t')).toEqual({ backoff: { type: 'fixed', delay: 2_000, cap: 60_000, jitter: false } });
  });

  it('rejects something that is not an object', () => {
    expect(() => defineTasks(null as never)).toThrow(OptionError);
  });
});

describe('currentTask', () => {
  it('throws outside a running task', () => {
    expect(() => currentTask()).toThrow(InvalidStateError);
    expect(() => currentTask()).toThrow(/outside a running task/);
  });
});
