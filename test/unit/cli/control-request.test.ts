/**
 * askNodes with a scripted broker: a node listed as live that leaves before
 * the request is posted (the broker posts to live leases only) is named as
 * never asked, not as one that did not reply in time.
 */
import { describe, expect, it } from 'vitest';
import { askNodes, failure, type NodeAsker } from '../../../dist/cli/control-request.js';
import type { ControlReply, NodeInfo } from '../../../dist/broker/types.js';

const node = (id: string): NodeInfo => ({ id, name: `n-${id}` }) as NodeInfo;

function scripted(live: NodeInfo[], postedTo: string[], replies: ControlReply[]): NodeAsker {
  return {
    listNodes: () => Promise.resolve(live),
    sendControl: () => Promise.resolve(postedTo),
    waitForControlReplies: () => Promise.resolve(replies),
  } as unknown as NodeAsker;
}

describe('askNodes', () => {
  it('tells a node that left before the request apart from one that did not reply', async () => {
    const replied: ControlReply = { node: 'n-a', nodeId: 'a', ok: true, value: 'pong' };
    const answers = await askNodes(
      scripted([node('a'), node('b'), node('c')], ['a', 'b'], [replied]),
      'ping',
      [],
      undefined,
      200,
    );
    expect(answers.map((a) => [a.node.id, a.reply?.ok === true ? 'ok' : failure(a.reply, 200)])).toEqual([
      ['a', 'ok'],
      ['b', 'no reply within 200 ms'],
      ['c', 'error: not sent: the node left the cluster (its lease ended) before the request was posted'],
    ]);
  });
});
