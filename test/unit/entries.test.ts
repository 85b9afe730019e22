/**
 * What each package entry exports: 'prefork' the public API and the error
 * classes, 'prefork/task' what a task module needs, 'prefork/broker' the
 * broker SPI. Helpers (messageOf, describeValue) and the SPI stay out of
 * the main entry.
 */
import { describe, expect, it } from 'vitest';
import * as full from 'prefork';
import * as spi from 'prefork/broker';
import * as light from 'prefork/task';
import * as errors from '../../dist/errors.js';

const ERROR_CLASSES = Object.entries(errors).filter(
  ([, value]) => typeof value === 'function' && (value as { prototype: unknown }).prototype instanceof Error,
);
const API = [
  'Client',
  'JobHandle',
  'WorkflowHandle',
  'Pool',
  'Worker',
  'currentTask',
  'defineSchedule',
  'defineTasks',
  'task',
  'chain',
  'group',
  'chord',
];

describe('the package entries', () => {
  it("'prefork' exports the public API and every error class, nothing else", () => {
    expect(ERROR_CLASSES.length).toBeGreaterThan(15);
    for (const [name, value] of ERROR_CLASSES) expect(full[name as keyof typeof full], name).toBe(value);
    expect(Object.keys(full).sort()).toEqual([...API, ...ERROR_CLASSES.map(([name]) => name)].sort());
  });

  it("'prefork/task' exports defineTasks, currentTask and every error class, nothing else", () => {
    for (const [name, value] of ERROR_CLASSES) expect(light[name as keyof typeof light], name).toBe(value);
    expect(Object.keys(light).sort()).toEqual(['currentTask', 'defineTasks', ...ERROR_CLASSES.map(([n]) => n)].sort());
  });

  it("'prefork/broker' exports createBroker and the errors a broker throws", async () => {
    expect(Object.keys(spi).sort()).toEqual([
      'BrokerOfflineError',
      'BrokerRefusedError',
      'BrokerTimeoutError',
      'BrokerUnavailableError',
      'createBroker',
    ]);
    expect(spi.BrokerOfflineError).toBe(full.BrokerOfflineError);
    expect(spi.BrokerRefusedError).toBe(full.BrokerRefusedError);
    expect(spi.BrokerTimeoutError).toBe(full.BrokerTimeoutError);
    expect(spi.BrokerUnavailableError).toBe(full.BrokerUnavailableError);
    const broker = spi.createBroker('memory://entries');
    expect(broker.displayUrl).toBe('memory://entries');
    await broker.close();
  });
});

describe('the bin', () => {
  it('dist/cli/main.js is executable, as package.json names it the prefork command (a clone runs it directly)', async () => {
    const { readFileSync, statSync } = await import('node:fs');
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      bin: Record<string, string>;
    };
    expect(pkg.bin.prefork).toBe('./dist/cli/main.js');
    const file = new URL('../../dist/cli/main.js', import.meta.url);
    expect(readFileSync(file, 'utf8').startsWith('#!/usr/bin/env node\n')).toBe(true);
    expect(statSync(file).mode & 0o111).toBe(0o111);
  });
});
