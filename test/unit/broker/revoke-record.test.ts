import { describe, expect, it } from 'vitest';
import { RevokedError } from 'prefork';
import { revokedError } from '../../../dist/broker/revoke-record.js';
import { revokedFailure } from '../../../dist/broker/member-failures.js';
import { deserializeError, serializeError } from '../../../dist/protocol/error-codec.js';
import { stepFailure } from '../../../dist/workflow/record.js';
import type { JobRecord } from '../../../dist/broker/types.js';

describe('a revoke writes a RevokedError without making one', () => {
  it("the wire form is serializeError's, less the stack", () => {
    const { stack, ...made } = serializeError(new RevokedError('j-1'));
    expect(stack).toContain('RevokedError');
    expect(revokedError('j-1')).toEqual(made);
  });

  it('read back, it is a RevokedError naming the job', () => {
    const err = deserializeError(revokedError('j-2'));
    expect(err).toBeInstanceOf(RevokedError);
    expect(err).toMatchObject({ code: 'PREFORK_REVOKED', jobId: 'j-2', message: 'job j-2 was revoked' });
    expect(err.stack).toContain('RevokedError');
  });

  it("a member's failure in its workflow is stepFailure's of a RevokedError", () => {
    const job = { id: 'm-1', task: 'resize' } as JobRecord;
    expect(revokedFailure(job)).toEqual(stepFailure('m-1', 'resize', new RevokedError('m-1')));
  });
});
