import { DEFAULT_REVOKE_GRACE_MS } from '../broker/revoke-record.js';
import type { BrokerAdmin, BrokerPauses, RevokeOutcome } from '../broker/types.js';
import { answerLines, answersJson, parseControl, runControl } from '../cli/commands/control.js';
import { describeRevoke } from '../cli/commands/revoke.js';
import type { NodeAsker } from '../cli/control-request.js';
import { changeDead, inUseLines, inWorkflowLines } from '../cli/dead-jobs.js';
import {
  optionalBoolean,
  optionalQueue,
  optionalString,
  requiredJobId,
  requiredString,
  stringList,
  type Body,
} from './request-input.js';

/** What an action did: `ok` false when part of it failed (a node that did not answer, an id not found), and lines for people. */
export interface ActionResult {
  ok: boolean;
  lines: string[];
  [more: string]: unknown;
}

/** What the actions reach: the same broker roles and Client calls as the CLI's commands. */
export interface ActionContext {
  broker: NodeAsker & BrokerPauses & BrokerAdmin;
  revoke(ids: readonly string[], options: { terminate: boolean; grace: number }): Promise<RevokeOutcome[]>;
  controlTimeoutMs: number;
}

type Action = (ctx: ActionContext, body: Body) => Promise<ActionResult>;

/**
 * The page's buttons, each through the function its CLI command calls:
 * `dead retry|delete` (changeDead), `revoke` (the Client's revokeMany),
 * `control` (parseControl and runControl: grow, shrink, autoscale,
 * shutdown, pause, resume, ping).
 */
export const ACTIONS: ReadonlyMap<string, Action> = new Map<string, Action>([
  ['dead-retry', (ctx, body) => dead(ctx, body, 'retry')],
  ['dead-delete', (ctx, body) => dead(ctx, body, 'delete')],
  ['revoke', revoke],
  ['control', control],
]);

async function dead(ctx: ActionContext, body: Body, action: 'retry' | 'delete'): Promise<ActionResult> {
  const id = requiredJobId(body);
  const change = await changeDead(ctx.broker, action, [id], optionalQueue(body, 'queue'));
  const { count, notDead, inWorkflow, inUse } = change;
  const lines = [
    `${action === 'retry' ? 'requeued' : 'deleted'} ${count} dead job(s)`,
    ...inWorkflowLines(inWorkflow),
    ...inUseLines(inUse),
  ];
  if (notDead.length > 0) lines.push(`not in the dead set: ${notDead.join(', ')}`);
  return { ok: notDead.length === 0 && inWorkflow.length === 0 && inUse.length === 0, lines, count, notDead };
}

async function revoke(ctx: ActionContext, body: Body): Promise<ActionResult> {
  const id = requiredJobId(body);
  const outcomes = await ctx.revoke([id], {
    terminate: optionalBoolean(body, 'terminate'),
    grace: DEFAULT_REVOKE_GRACE_MS,
  });
  return { ok: outcomes.every((o) => o.outcome !== 'unknown'), lines: outcomes.map(describeRevoke), outcomes };
}

async function control(ctx: ActionContext, body: Body): Promise<ActionResult> {
  const parsed = parseControl(requiredString(body, 'command'), stringList(body, 'args'));
  const { said, answers } = await runControl(ctx.broker, parsed, optionalString(body, 'node'), ctx.controlTimeoutMs);
  return {
    ok: answers.every((a) => a.reply?.ok === true),
    lines: [...(said === undefined ? [] : [said]), ...answerLines(parsed.command, answers, ctx.controlTimeoutMs)],
    replies: answersJson(answers, ctx.controlTimeoutMs),
  };
}
