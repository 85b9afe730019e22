import { Option, type Command } from 'commander';
import { brokerOption, namespaceOption } from '../broker-flags.js';
import type { RevokeOutcome } from '../../broker/types.js';
import { DEFAULT_REVOKE_GRACE_MS } from '../../broker/revoke-record.js';
import { withClient } from '../connect.js';
import * as parse from '../parsers.js';
import { printJson } from '../print.js';

interface RevokeFlags {
  broker?: string;
  namespace?: string;
  terminate?: boolean;
  grace: number;
  json?: boolean;
}

/** One line for people per job (`prefork revoke`, the dashboard's revoke button). */
export function describeRevoke(o: RevokeOutcome): string {
  if (o.outcome === 'finished' && o.state === undefined && o.workflow !== undefined)
    return `${o.id}: a step workflow ${o.workflow} skipped (it never runs), nothing to revoke`;
  if (o.outcome === 'finished') return `${o.id}: already finished (${o.state ?? '?'}), nothing to revoke`;
  if (o.outcome === 'unknown') return `${o.id}: unknown job id`;
  if (o.members !== undefined)
    return `${o.id}: workflow revoked: ${o.members} of its jobs that had not ended (none of them starts from now on)`;
  if (o.state === 'REVOKED') return `${o.id}: revoked already`;
  const where = o.removed === true ? ', taken out of its queue' : '';
  const was = o.state !== undefined ? ` (was ${o.state})` : '';
  return `${o.id}: revoked${was}${where}${o.workflow === undefined ? '' : inWorkflow(o.workflow, o.removed === true, o.unstarted === true)}`;
}

/** What a revoke did to the workflow the job is a step of. */
function inWorkflow(workflow: string, removed: boolean, unstarted: boolean): string {
  if (unstarted)
    return `; a step of workflow ${workflow} not enqueued yet: it never runs, and fails in it when its turn comes`;
  return removed
    ? `; a step of workflow ${workflow}, which records it as failed (the steps after it never run)`
    : `; a step of workflow ${workflow}, which hears how it ends from the node that holds it`;
}

export function registerRevoke(program: Command): void {
  program
    .command('revoke')
    .description('revoke jobs: one not started never runs; with --terminate a running one is stopped')
    .argument('<ids...>', 'job ids (or workflow ids: every job of it that has not ended)', parse.jobIds)
    .addOption(brokerOption())
    .addOption(namespaceOption())
    .option('--terminate', 'also stop a running job: its signal aborts, its child is killed after --grace')
    .addOption(
      new Option(
        '--grace <duration>',
        'with --terminate: how long a running job has to stop before its child is killed (e.g. 10s)',
      )
        .argParser(parse.waitDuration)
        .default(DEFAULT_REVOKE_GRACE_MS, `${DEFAULT_REVOKE_GRACE_MS / 1000}s`),
    )
    .option('--json', 'print a JSON array, one outcome per id')
    .action(async (ids: string[], flags: RevokeFlags) => {
      const outcomes = await withClient(flags, (client) =>
        client.revokeMany(ids, { terminate: flags.terminate === true, grace: flags.grace }),
      );
      if (flags.json) printJson(outcomes);
      else
        for (const o of outcomes)
          (o.outcome === 'unknown' ? process.stderr : process.stdout).write(
            `${o.outcome === 'unknown' ? 'error: ' : ''}${describeRevoke(o)}\n`,
          );
      // An unknown id is an error (a typo loses the revoke); a finished job is not.
      if (outcomes.some((o) => o.outcome === 'unknown')) process.exitCode = 1;
    });
}
