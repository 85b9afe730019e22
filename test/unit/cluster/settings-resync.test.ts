/**
 * SettingsResync with a scripted source (the reads it makes): it reads
 * only after a beat that says requests were posted (or after a read that
 * failed or was overtaken), and never applies a read that a pause or rate
 * request followed meanwhile, which may be newer than what it read. Revoked
 * ids are read from the latest one it saw, and handed on even so.
 */
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { SettingsResync, type RememberedSettings } from '../../../dist/cluster/settings-resync.js';
import type { PausedQueue, RevokedJob } from '../../../dist/broker/types.js';

const silent = pino({ level: 'silent' });

function scripted() {
  const reads: { resolve: (pauses: PausedQueue[]) => void; reject: (err: Error) => void }[] = [];
  const applied: RememberedSettings[] = [];
  const revoked: RevokedJob[] = [];
  const told: RevokedJob[][] = [];
  const since: (number | undefined)[] = [];
  const source = {
    listPaused: () => new Promise<PausedQueue[]>((resolve, reject) => reads.push({ resolve, reject })),
    rateLimits: () => Promise.resolve(new Map([['t', '1/h']])),
    listRevoked: (from?: number) => {
      since.push(from);
      return Promise.resolve(revoked.filter((r) => from === undefined || r.revokedAt >= from));
    },
  };
  const resync = new SettingsResync(
    source,
    (s) => applied.push(s),
    (jobs) => told.push([...jobs]),
    silent,
  );
  return { resync, reads, applied, revoked, told, since };
}

describe('SettingsResync', () => {
  it('reads after a beat that was posted to, not after a quiet one', async () => {
    const { resync, reads, applied } = scripted();
    await resync.beat(false);
    expect(reads).toHaveLength(0);
    const done = resync.beat(true);
    reads[0]!.resolve([{ queue: 'q' }]);
    await done;
    expect(applied).toEqual([{ pauses: [{ queue: 'q' }], rates: new Map([['t', '1/h']]) }]);
    await resync.beat(false);
    expect(reads).toHaveLength(1);
  });

  it('drops a read a request overtook, and reads again at the next beat', async () => {
    const { resync, reads, applied } = scripted();
    const done = resync.beat(true);
    resync.changed();
    reads[0]!.resolve([]);
    await done;
    expect(applied).toEqual([]);
    const again = resync.beat(false);
    reads[1]!.resolve([{ queue: 'q' }]);
    await again;
    expect(applied).toHaveLength(1);
  });

  it('a posted beat while a read is under way, or a failed read, has the next beat read again', async () => {
    const { resync, reads, applied } = scripted();
    const first = resync.beat(true);
    const second = resync.beat(true);
    reads[0]!.reject(new Error('connection lost'));
    await Promise.all([first, second]);
    expect(applied).toEqual([]);
    const retry = resync.beat(false);
    reads[1]!.resolve([]);
    await retry;
    expect(applied).toHaveLength(1);
    await resync.beat(false);
    expect(reads).toHaveLength(2);
  });

  it('reads the ids revoked since the latest it saw, and hands them on even when a request overtook the read', async () => {
    const { resync, reads, applied, revoked, told, since } = scripted();
    resync.readRevoked([{ id: 'old', revokedAt: 100, expiresAt: 1_000 }]);
    revoked.push({ id: 'old', revokedAt: 100, expiresAt: 1_000 }, { id: 'new', revokedAt: 200, expiresAt: 1_100 });
    const done = resync.beat(true);
    resync.changed();
    reads[0]!.resolve([]);
    await done;
    expect(since).toEqual([100]);
    expect(told).toEqual([revoked]);
    expect(applied).toEqual([]);
    const again = resync.beat(false);
    reads[1]!.resolve([]);
    await again;
    // From the latest seen on: only 'new' again (the Worker skips the ids it knows).
    expect(since).toEqual([100, 200]);
    expect(told[1]).toEqual([{ id: 'new', revokedAt: 200, expiresAt: 1_100 }]);
  });
});
