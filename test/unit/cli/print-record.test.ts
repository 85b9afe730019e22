/** `prefork result` says what a state means: a running job reads as running, not as waiting. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { printRecord } from '../../../dist/cli/print.js';
import type { ResultRecord } from 'prefork';

function printed(record: ResultRecord): string {
  let out = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out += String(chunk);
    return true;
  });
  printRecord(record, false);
  vi.restoreAllMocks();
  return out;
}

const base = { id: 'j1', task: 'add', queue: 'default', retries: 0, enqueuedAt: 0 };

afterEach(() => vi.restoreAllMocks());

describe('printRecord', () => {
  it.each([
    ['STARTED', 'STARTED (running)'],
    ['RECEIVED', 'RECEIVED (reserved by a node, not started yet)'],
    ['RETRY', 'RETRY (failed; another attempt is scheduled)'],
    ['SUCCESS', 'SUCCESS'],
  ] as const)('%s', (state, shown) => {
    const out = printed({ ...base, state, node: 'n1', pid: 42 });
    expect(out).toMatch(new RegExp(`^state: +${shown.replace(/[()]/g, '\\$&')}$`, 'm'));
    expect(out).toMatch(/^node: +n1 \(pid 42\)$/m);
  });

  it('RECEIVED found held by a node that does not track starts: it may be running', () => {
    const out = printed({ ...base, state: 'RECEIVED', node: 'n1', receivedAt: 1 });
    expect(out).toMatch(/^state: +RECEIVED \(held by a node: buffered or running; it does not track starts\)$/m);
    expect(out).toMatch(/^received: +1970-01-01T00:00:00\.001Z$/m);
  });

  it('PENDING delayed, and PENDING waiting for its rate-limit turn', () => {
    expect(printed({ ...base, state: 'PENDING', dueAt: 1 })).toMatch(
      /^state: +PENDING \(delayed until 1970-01-01T00:00:00\.001Z\)$/m,
    );
    expect(printed({ ...base, state: 'PENDING', dueAt: 1, rateLimited: true })).toMatch(
      /^state: +PENDING \(waiting for its rate-limit turn, due at 1970-01-01T00:00:00\.001Z\)$/m,
    );
  });
});
