import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import {
  decodeControlReply,
  decodeControlRequests,
  encodeControlReply,
  encodeControlRequest,
} from '../../../dist/broker/control-codec.js';
import type { ControlReply, ControlRequest } from '../../../dist/broker/types.js';

/** Control requests and replies are read back from the broker: what another version or garbage left is refused, never passed on typed. */
const silent = pino({ level: 'silent' });

describe('control requests', () => {
  it('round-trips a request', () => {
    const request: ControlRequest = { id: 'r1', command: 'grow', args: [2] };
    expect(decodeControlRequests([encodeControlRequest(request)], silent)).toEqual([request]);
  });

  it('keeps string args: each command checks its own', () => {
    const request: ControlRequest = { id: 'r2', command: 'revoke', args: [1, 5000, 1_700_000_000_000, 'job-1'] };
    expect(decodeControlRequests([encodeControlRequest(request)], silent)).toEqual([request]);
  });

  it('round-trips a request with string args (each command checks its own)', () => {
    const request: ControlRequest = { id: 'r3', command: 'pause', args: ['images', 'all'] };
    expect(decodeControlRequests([encodeControlRequest(request)], silent)).toEqual([request]);
  });

  it.each([
    ['not JSON', '{'],
    ['null', 'null'],
    ['an array', '["r1", "ping", []]'],
    ['an unknown command', '{"id":"r1","command":"fly","args":[]}'],
    ['a command that is not a string', '{"id":"r1","command":3,"args":[]}'],
    ['an id that is not a string', '{"id":1,"command":"ping","args":[]}'],
    ['args that are neither numbers nor strings', '{"id":"r1","command":"grow","args":[true]}'],
    ['an arg that is an object', '{"id":"r1","command":"revoke","args":[0,5000,1,{"id":"x"}]}'],
    ['a pause arg that is an object', '{"id":"r1","command":"pause","args":[{"queue":"q"}]}'],
  ])('skips %s and keeps the readable ones', (_what, raw) => {
    const good = encodeControlRequest({ id: 'ok', command: 'ping', args: [] });
    expect(decodeControlRequests([raw, good], silent).map((r) => r.id)).toEqual(['ok']);
  });
});

describe('control replies', () => {
  it('round-trips a reply, with or without value and error', () => {
    const ok: ControlReply = { node: 'a@h', nodeId: 'a-1', ok: true, value: { pid: 1 } };
    const refused: ControlReply = { node: 'a@h', nodeId: 'a-1', ok: false, error: 'no autoscale' };
    expect(decodeControlReply(encodeControlReply(ok))).toEqual(ok);
    expect(decodeControlReply(encodeControlReply(refused))).toEqual(refused);
  });

  it('keeps string args: each command checks its own', () => {
    const request: ControlRequest = { id: 'r2', command: 'active', args: ['x', 1] };
    expect(decodeControlRequests([encodeControlRequest(request)], silent)).toEqual([request]);
  });

  it.each([
    ['not JSON', '{'],
    ['null', 'null'],
    ['an array', '["a@h", true]'],
    ['no node', '{"nodeId":"a-1","ok":true}'],
    ['no nodeId', '{"node":"a@h","ok":true}'],
    ['ok that is not a boolean', '{"node":"a@h","nodeId":"a-1","ok":"yes"}'],
    ['an error that is not a string', '{"node":"a@h","nodeId":"a-1","ok":false,"error":5}'],
  ])('refuses %s', (_what, raw) => {
    expect(decodeControlReply(raw)).toBeUndefined();
  });
});
