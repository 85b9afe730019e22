import { describe, expect, it } from 'vitest';
import { encodeBody } from '../../../dist/protocol/codec.js';
import { MessageType } from '../../../dist/protocol/messages.js';
import { frameSeq } from '../../../dist/protocol/result-head.js';

const resultOkSeq = (body: Buffer): number | undefined => frameSeq(body, MessageType.RESULT_OK);

describe('frameSeq: the seq of a RESULT_OK or PROGRESS frame, from its head alone', () => {
  it.each([0, 5, 127, 200, 70_000, 2 ** 31, 2 ** 32 - 1])(
    'reads seq %d, whatever the frame carries after it',
    (seq) => {
      expect(resultOkSeq(encodeBody([MessageType.RESULT_OK, seq, { any: 'value' }]))).toBe(seq);
      expect(resultOkSeq(encodeBody([MessageType.RESULT_OK, seq, 1, null, 1_700_000_000_000]))).toBe(seq);
    },
  );

  it.each([
    ['a RESULT_ERROR', [MessageType.RESULT_ERROR, 5, { name: 'Error', message: 'x' }]],
    ['an ACK', [MessageType.ACK, 5, 1]],
    ['a tuple too short', [MessageType.RESULT_OK, 5]],
    ['a seq that is not a whole number', [MessageType.RESULT_OK, 'five', 1]],
    ['not a tuple', { type: MessageType.RESULT_OK }],
  ])('says nothing of %s', (_, frame) => {
    expect(resultOkSeq(encodeBody(frame))).toBeUndefined();
  });

  it('says nothing of an empty or cut frame', () => {
    expect(resultOkSeq(Buffer.alloc(0))).toBeUndefined();
    expect(resultOkSeq(encodeBody([MessageType.RESULT_OK, 70_000, 1]).subarray(0, 4))).toBeUndefined();
  });

  it("reads a PROGRESS frame's seq, and only when asked for PROGRESS", () => {
    const progress = encodeBody([MessageType.PROGRESS, 300, { any: 'value' }]);
    expect(frameSeq(progress, MessageType.PROGRESS)).toBe(300);
    expect(frameSeq(progress, MessageType.RESULT_OK)).toBeUndefined();
  });
});
