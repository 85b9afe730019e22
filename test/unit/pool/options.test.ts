import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import { OptionError, Pool } from 'prefork';
import { POOL_DEFAULTS, resolvePoolOptions } from '../../../dist/pool/options.js';
import type { PoolOptions } from 'prefork';

const APP = '/srv/app/tasks.mjs';

function rejectionOf(options: Record<string, unknown>): OptionError {
  try {
    resolvePoolOptions(options as unknown as PoolOptions);
  } catch (err) {
    expect(err).toBeInstanceOf(OptionError);
    return err as OptionError;
  }
  throw new Error(`resolvePoolOptions accepted ${JSON.stringify(options)}`);
}

describe('resolvePoolOptions', () => {
  it('applies the defaults', () => {
    const o = resolvePoolOptions({ app: APP, processes: 3 });
    expect(o).toMatchObject({
      app: APP,
      processes: 3,
      autoscale: undefined,
      strategy: 'fair',
      keepalive: POOL_DEFAULTS.keepalive,
      autoscaleInterval: POOL_DEFAULTS.autoscaleInterval,
      procAliveTimeout: POOL_DEFAULTS.procAliveTimeout,
      maxRestarts: POOL_DEFAULTS.maxRestarts,
      restartWindow: POOL_DEFAULTS.restartWindow,
      maxFrameSize: POOL_DEFAULTS.maxFrameSize,
      killTimeout: POOL_DEFAULTS.killTimeout,
      maxTasksPerChild: undefined,
      maxMemoryPerChild: undefined,
      timeLimit: undefined,
      softTimeLimit: undefined,
      execArgv: [],
      env: {},
    });
  });

  it('defaults processes to at least one', () => {
    expect(resolvePoolOptions({ app: APP }).processes).toBeGreaterThanOrEqual(1);
  });

  it('resolves durations and sizes given as strings', () => {
    const o = resolvePoolOptions({
      app: APP,
      timeLimit: '2m',
      softTimeLimit: '90s',
      procAliveTimeout: '5s',
      keepalive: '0',
      maxMemoryPerChild: '512MiB',
      maxFrameSize: '1MB',
      strategy: 'fcfs',
      maxTasksPerChild: 100,
    });
    expect(o).toMatchObject({
      timeLimit: 120_000,
      softTimeLimit: 90_000,
      procAliveTimeout: 5_000,
      keepalive: 0,
      maxMemoryPerChild: 512 * 1024 ** 2,
      maxFrameSize: 1_000_000,
      strategy: 'fcfs',
      maxTasksPerChild: 100,
    });
  });

  it('accepts autoscale as "max,min" and as [max, min]', () => {
    expect(resolvePoolOptions({ app: APP, autoscale: '4,1' }).autoscale).toEqual({ max: 4, min: 1 });
    expect(resolvePoolOptions({ app: APP, autoscale: [6, 0] }).autoscale).toEqual({ max: 6, min: 0 });
  });

  const invalid: [string, unknown][] = [
    ['app', undefined],
    ['app', ''],
    ['app', 42],
    ['processes', 0],
    ['processes', -2],
    ['processes', 1.5],
    ['processes', '2'],
    ['strategy', 'lifo'],
    ['timeLimit', 'soon'],
    ['timeLimit', 0],
    ['timeLimit', -5],
    ['softTimeLimit', '1 fortnight'],
    ['maxTasksPerChild', 0],
    ['maxTasksPerChild', 2.5],
    ['maxMemoryPerChild', '12 parsecs'],
    ['maxMemoryPerChild', 0],
    ['maxMemoryPerChild', -1],
    ['procAliveTimeout', 0],
    ['procAliveTimeout', 'never'],
    ['maxRestarts', 0],
    ['maxRestarts', 'many'],
    ['restartWindow', 'x'],
    ['maxFrameSize', 'huge'],
    ['keepalive', -1],
    ['keepalive', 'forever'],
    ['autoscaleInterval', 0],
    ['killTimeout', 'later'],
    ['execArgv', '--inspect'],
    ['execArgv', [1, 2]],
    ['env', null],
    ['env', 'A=1'],
    ['autoscale', '4'],
    ['autoscale', '1,2'],
    ['autoscale', '0,0'],
    ['autoscale', '4,-1'],
    ['autoscale', 'a,b'],
    ['autoscale', [2.5, 1]],
    ['autoscale', [4, -1]],
    ['autoscale', [1, 3]],
    ['autoscale', 4],
    ['maxProcesses', 0],
    ['maxProcesses', 2.5],
    ['maxProcesses', 'many'],
    // Counts past their bounds: 4096 children, 2^53-1 (past it a number is no longer exact), 2^32-1 bytes a frame.
    ['processes', 4097],
    ['processes', 1e20],
    ['maxProcesses', 4097],
    ['autoscale', '99999999999999999999,1'],
    ['autoscale', '4097,1'],
    ['autoscale', [1e20, 1]],
    ['maxTasksPerChild', 2 ** 53],
    ['maxRestarts', 1e20],
    ['maxMemoryPerChild', 1e20],
    ['maxFrameSize', 2 ** 32],
  ];

  it.each(invalid)('rejects %s = %j, naming the option and the value', (option, value) => {
    const options: Record<string, unknown> = { app: APP, [option]: value };
    const err = rejectionOf(options);
    expect(err.option).toBe(option);
    expect(err.message).toContain(option);
    const shown = value === undefined ? 'undefined' : JSON.stringify(value);
    expect(err.message).toContain(shown);
    expect(err.value).toEqual(value);
    expect(err.code).toBe('PREFORK_BAD_OPTION');
  });

  it('rejects an unknown option, naming it', () => {
    const err = rejectionOf({ app: APP, procesess: 4 });
    expect(err.option).toBe('procesess');
    expect(err.message).toContain('procesess');
  });

  it('maxProcesses defaults to 4 x CPUs, or room for processes / autoscale max if larger', () => {
    const perCpu = 4 * availableParallelism();
    expect(resolvePoolOptions({ app: APP, processes: 1 }).maxProcesses).toBe(perCpu);
    expect(resolvePoolOptions({ app: APP, processes: perCpu + 3 }).maxProcesses).toBe(perCpu + 3);
    expect(resolvePoolOptions({ app: APP, autoscale: [perCpu + 5, 1] }).maxProcesses).toBe(perCpu + 5);
  });

  it('maxProcesses given: processes defaults to the CPUs up to it, and neither processes nor autoscale max may exceed it', () => {
    expect(resolvePoolOptions({ app: APP, maxProcesses: 1 })).toMatchObject({ processes: 1, maxProcesses: 1 });
    expect(resolvePoolOptions({ app: APP, processes: 3, maxProcesses: 3 }).maxProcesses).toBe(3);
    const tooMany = rejectionOf({ app: APP, processes: 5, maxProcesses: 4 });
    expect(tooMany.option).toBe('processes');
    expect(tooMany.message).toContain('maxProcesses (4)');
    const tooHigh = rejectionOf({ app: APP, autoscale: '6,1', maxProcesses: 4 });
    expect(tooHigh.option).toBe('autoscale');
    expect(tooHigh.message).toContain('maxProcesses (4)');
  });

  it('rejects a softTimeLimit that is not below timeLimit, naming softTimeLimit and its value', () => {
    const err = rejectionOf({ app: APP, timeLimit: 1000, softTimeLimit: 1000 });
    expect(err.option).toBe('softTimeLimit');
    expect(err.message).toContain('1000');
  });

  it('rejects a logger that is not a pino logger', () => {
    expect(rejectionOf({ app: APP, logger: { info: () => undefined } }).option).toBe('logger');
  });

  it('rejects a duration a timer cannot wait (over 2^31-1 ms), naming the option and the value', () => {
    for (const option of ['timeLimit', 'softTimeLimit', 'procAliveTimeout', 'autoscaleInterval', 'killTimeout']) {
      const err = rejectionOf({ app: APP, [option]: 2 ** 31 });
      expect(err.option).toBe(option);
      expect(err.message).toContain(String(2 ** 31));
      expect(err.message).toContain('2147483647');
    }
    expect(rejectionOf({ app: APP, timeLimit: '25d' }).option).toBe('timeLimit');
    expect(resolvePoolOptions({ app: APP, timeLimit: 2 ** 31 - 1 }).timeLimit).toBe(2 ** 31 - 1);
    expect(resolvePoolOptions({ app: APP, timeLimit: '24d' }).timeLimit).toBe(24 * 86_400_000);
  });

  it('accepts long keepalive and restartWindow (compared with clocks, never waited on)', () => {
    expect(resolvePoolOptions({ app: APP, keepalive: '30d', restartWindow: '30d' })).toMatchObject({
      keepalive: 30 * 86_400_000,
      restartWindow: 30 * 86_400_000,
    });
  });

  it("takes execPath (default: the parent's node) and rejects one that is not a path", () => {
    expect(resolvePoolOptions({ app: APP }).execPath).toBe(process.execPath);
    expect(resolvePoolOptions({ app: APP, execPath: '/opt/node/bin/node' }).execPath).toBe('/opt/node/bin/node');
    expect(rejectionOf({ app: APP, execPath: '' }).option).toBe('execPath');
    expect(rejectionOf({ app: APP, execPath: 42 }).option).toBe('execPath');
  });

  it('rejects options that are not an object', () => {
    expect(() => resolvePoolOptions(null as unknown as PoolOptions)).toThrow(OptionError);
  });

  it('is applied by the Pool constructor, which throws before spawning anything', () => {
    expect(() => new Pool({ app: APP, procesess: 2 } as unknown as PoolOptions)).toThrow(OptionError);
    expect(() => new Pool({ app: APP, autoscale: '2,3' })).toThrow(/autoscale/);
  });
});
