import { closeSync, constants, openSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ClaimPipe, ClaimTaker } from '../../../dist/protocol/claim-pipe.js';

/** A second open of the same FIFO, non-blocking as the child's (which shares the parent's through the fd it inherits). */
function childEnd(pipe: ClaimPipe): { taker: ClaimTaker; close(): void } {
  const fd = openSync(`/proc/self/fd/${pipe.fd}`, constants.O_RDWR | constants.O_NONBLOCK);
  return { taker: new ClaimTaker(fd), close: () => closeSync(fd) };
}

describe('the claim pipe', () => {
  it('gives each byte to one reader: a job the parent took back cannot be claimed, and the parent takes only what is left', () => {
    const pipe = ClaimPipe.create();
    expect(pipe).toBeDefined();
    const child = childEnd(pipe!);
    try {
      pipe!.give(3);
      expect(child.taker.claim()).toBe(true);
      expect(pipe!.take(5)).toBe(2);
      expect(child.taker.claim()).toBe(false);
      expect(pipe!.take(1)).toBe(0);
      pipe!.give(1);
      expect(child.taker.claim()).toBe(true);
      expect(child.taker.claim()).toBe(false);
    } finally {
      child.close();
      pipe!.close();
    }
  });

  it('holds more bytes than one write carries, and takes nothing once closed', () => {
    const pipe = ClaimPipe.create()!;
    pipe.give(600);
    expect(pipe.take(100)).toBe(100);
    expect(pipe.take(1000)).toBe(500);
    expect(pipe.take(1000)).toBe(0);
    pipe.give(1);
    pipe.close();
    expect(pipe.take(1)).toBe(0);
    pipe.close();
  });
});
