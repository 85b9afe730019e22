import { MessageType } from './messages.js';

/**
 * The seq of a frame of `type` ([type, seq, ...]: a RESULT_OK or a PROGRESS),
 * read from its head without decoding the rest: for a frame whose value the
 * parent cannot decode, so only that value is lost. Undefined for any other frame.
 */
export function frameSeq(
  body: Buffer,
  type: typeof MessageType.RESULT_OK | typeof MessageType.PROGRESS,
): number | undefined {
  // A fixarray of 3 to 5 items (a RESULT_OK's optional tail), then the type as a positive fixint.
  const head = body[0];
  if (head === undefined || head < 0x93 || head > 0x95 || body[1] !== type) return undefined;
  const tag = body[2];
  if (tag === undefined) return undefined;
  if (tag <= 0x7f) return tag;
  if (tag === 0xcc && body.length >= 4) return body.readUInt8(3);
  if (tag === 0xcd && body.length >= 5) return body.readUInt16BE(3);
  if (tag === 0xce && body.length >= 7) return body.readUInt32BE(3);
  return undefined;
}
