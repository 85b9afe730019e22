/**
 * A node's revoked ids (Revocations) are bounded as the broker's set is: no
 * more than revokeMax, the oldest going first, however many revokes come
 * within revokeTtl; expired ones go too.
 */
import { describe, expect, it } from 'vitest';
import { Revocations } from '../../../dist/cluster/revocations.js';

const DAY = 86_400_000;

describe('Revocations', () => {
  it('keeps at most max ids however many are added, the newest', () => {
    const revocations = new Revocations(100);
    const until = Date.now() + DAY;
    for (let i = 0; i < 10_000; i++) revocations.add([`job-${i}`], until);
    expect(revocations.size).toBe(100);
    expect(revocations.has('job-9999')).toBe(true);
    expect(revocations.has('job-9900')).toBe(true);
    expect(revocations.has('job-9899')).toBe(false);
  });

  it('bounds one request of more ids than max, keeping its last ones', () => {
    const revocations = new Revocations(10);
    const ids = Array.from({ length: 1_000 }, (_, i) => `job-${i}`);
    revocations.add(ids, Date.now() + DAY);
    expect(revocations.size).toBe(10);
    expect(revocations.has('job-999')).toBe(true);
    expect(revocations.has('job-989')).toBe(false);
  });

  it('loads at most max of the broker list, the newest (it comes oldest first)', () => {
    const revocations = new Revocations(3);
    const expiresAt = Date.now() + DAY;
    revocations.load(Array.from({ length: 8 }, (_, i) => ({ id: `job-${i}`, revokedAt: i, expiresAt })));
    expect(revocations.size).toBe(3);
    expect(['job-5', 'job-6', 'job-7'].every((id) => revocations.has(id))).toBe(true);
    expect(revocations.has('job-4')).toBe(false);
  });

  it('still drops expired ids from the front when under max', () => {
    const revocations = new Revocations(100);
    revocations.add(['old-1', 'old-2'], Date.now() - 1);
    revocations.add(['new'], Date.now() + DAY);
    expect(revocations.size).toBe(1);
    expect(revocations.has('new')).toBe(true);
  });
});

describe('Revocations.untold', () => {
  it('names only what the newest max of a list adds: older ids would push out newer ones', () => {
    const revocations = new Revocations(5);
    const expiresAt = Date.now() + DAY;
    const jobs = Array.from({ length: 40 }, (_, i) => ({ id: `job-${i}`, revokedAt: i, expiresAt }));
    // Told one by one, as requests: the node kept the newest five.
    for (const job of jobs) revocations.add([job.id], expiresAt);
    expect(revocations.untold(jobs)).toEqual([]);
    const missed = { id: 'job-40', revokedAt: 40, expiresAt };
    expect(revocations.untold([...jobs, missed])).toEqual([missed]);
  });
});
