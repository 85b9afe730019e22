import { describe, expect, it } from 'vitest';
import { currentTask, defineTasks } from 'prefork';

describe('defineTasks', () => {
  it('registers plain functions and { run, ...options } entries, with their options resolved', () => {
    const echo = (x: unknown): unknown => x;
    const resize = (): number => 1;
    const registry = defineTasks({ echo, resize: { run: resize, retries: 3, timeLimit: '1m', softTimeLimit: 500 } });
    expect([...registry.tasks.keys()]).toEqual(['echo', 'resize']);
    expect(registry.tasks.get('echo')).toBe(echo);
    expect(registry.tasks.get('resize')).toBe(resize);
    expect(registry.options.resize).toEqual({ retries: 3, timeLimit: 60_000, softTimeLimit: 500 });
    expect(registry.options.echo).toBeUndefined();
  });

  it.each([
    [{ broken: 42 }, 'broken'],
    [{ broken: { retries: 1 } }, 'broken'],
    [{ t: { run: () => 1, retries: -1 } }, 'retries'],
    [{ t: { run: () => 1, retries: 1.5 } }, 'retries'],
    [{ t: { run: () => 1, timeLimit: 'soon' } }, 'timeLimit'],
    [{ t: { run: () => 1, softTimeLimit: 0 } }, 'softTimeLimit'],
    [{ t: { run: () => 1, retires: 3 } }, 'retires'],
  ])('rejects %j with a TypeError naming %s', (tasks, named) => {
    expect(() => defineTasks(tasks as never)).toThrow(TypeError);
    expect(() => defineTasks(tasks as never)).toThrow(named);
  });

  it('rejects something that is not an object', () => {
    expect(() => defineTasks(null as never)).toThrow(TypeError);
  });
});

describe('currentTask', () => {
  it('throws outside a running task', () => {
    expect(() => currentTask()).toThrow(/outside a running task/);
  });
});
