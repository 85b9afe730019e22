import type { Command } from 'commander';
import { brokerOption, namespaceOption } from '../broker-flags.js';
import { withBroker } from '../connect.js';
import { changeDead, inUseLines, inWorkflowLines, retryAllDead } from '../dead-jobs.js';
import { argsJson, argsText, isoTime } from '../job-format.js';
import * as parse from '../parsers.js';
import { printJson, printTable } from '../print.js';
import { queuesOf } from '../queue-overview.js';
import { UsageError } from '../usage-error.js';

export function registerAdmin(program: Command): void {
  program
    .command('purge')
    .description('drop every waiting and delayed job of a queue (a workflow member dropped fails its workflow)')
    .argument('<queue>', 'queue name', parse.queueName)
    .addOption(brokerOption())
    .addOption(namespaceOption())
    .option('--json', 'print JSON')
    .action(async (queue: string, flags: { broker?: string; namespace?: string; json?: boolean }) => {
      const n = await withBroker(flags, (b) => b.purge(queue));
      if (flags.json) printJson({ queue, purged: n });
      else process.stdout.write(`purged ${n} job(s) from ${queue}\n`);
    });

  const dead = program.command('dead').description('the dead set: jobs that failed for good');
  dead
    .command('list')
    .description('list dead jobs')
    .addOption(brokerOption())
    .addOption(namespaceOption())
    .option('-q, --queue <name>', 'only this queue', parse.queueName)
    .option('--limit <n>', 'at most this many per queue', parse.positiveInt, 50)
    .option('--json', 'print a JSON array')
    .action(async (flags: { broker?: string; namespace?: string; queue?: string; limit: number; json?: boolean }) => {
      await withBroker(flags, async (b) => {
        const dead: Record<string, unknown>[] = [];
        const rows: (string | number)[][] = [];
        for (const queue of await queuesOf(b, flags.queue)) {
          for (const d of await b.listDead(queue, flags.limit)) {
            const { job } = d;
            if (flags.json)
              dead.push({
                id: job.id,
                task: job.task,
                queue,
                attempt: job.attempt,
                reason: d.reason,
                diedAt: d.diedAt,
                ...argsJson({ payload: job.payload }),
              });
            else
              rows.push([
                job.id,
                job.task,
                queue,
                argsText({ payload: job.payload }),
                job.attempt,
                isoTime(d.diedAt),
                d.reason,
              ]);
          }
        }
        if (flags.json) printJson(dead);
        else printTable(['ID', 'TASK', 'QUEUE', 'ARGS', 'RETRIES', 'DIED', 'REASON'], rows);
      });
    });
  dead
    .command('retry')
    .description('put dead jobs back on their queue')
    .argument('[ids...]', 'job ids', parse.jobIds)
    .option('--all', 'every dead job')
    .addOption(brokerOption())
    .addOption(namespaceOption())
    .option('-q, --queue <name>', 'only this queue', parse.queueName)
    .option('--json', 'print JSON')
    .action(
      async (
        ids: string[],
        flags: { all?: boolean; broker?: string; namespace?: string; queue?: string; json?: boolean },
      ) => {
        if (!flags.all && ids.length === 0) throw new UsageError("dead retry: give job ids or '--all'");
        if (flags.all && ids.length > 0) throw new UsageError("dead retry: give job ids or '--all', not both");
        const { requeued, unknown, inWorkflow, inUse } = await withBroker(flags, async (b) => {
          if (flags.all) {
            // What --all leaves: the workflows' jobs and those whose id is in use (a retry never moves them).
            const { count, inWorkflow, inUse } = await retryAllDead(b, await queuesOf(b, flags.queue));
            return { requeued: count, unknown: [], inWorkflow, inUse };
          }
          const { count, notDead, inWorkflow, inUse } = await changeDead(b, 'retry', ids, flags.queue);
          return { requeued: count, unknown: notDead, inWorkflow, inUse };
        });
        // inWorkflow and inUse only when there are some: the usual document stays as it was.
        if (flags.json)
          printJson({
            requeued,
            notDead: unknown,
            ...(inWorkflow.length > 0 ? { inWorkflow } : {}),
            ...(inUse.length > 0 ? { inUse } : {}),
          });
        else process.stdout.write(`requeued ${requeued} dead job(s)\n`);
        // Asked for by id, a job left dead is refused (exit 1); --all skips them, with a warning.
        const label = flags.all ? 'warning: left dead:' : 'error: not retried:';
        for (const line of [...inWorkflowLines(inWorkflow), ...inUseLines(inUse)])
          process.stderr.write(`${label} ${line}\n`);
        if (!flags.all && inWorkflow.length + inUse.length > 0) process.exitCode = 1;
        if (unknown.length > 0) {
          const where = flags.queue === undefined ? 'the dead set' : `the dead set of queue ${flags.queue}`;
          process.stderr.write(`error: not in ${where}: ${unknown.join(', ')}\n`);
          process.exitCode = 1;
        }
      },
    );
  dead
    .command('delete')
    .description('drop dead jobs by id')
    .argument('<ids...>', 'job ids', parse.jobIds)
    .addOption(brokerOption())
    .addOption(namespaceOption())
    .option('-q, --queue <name>', 'only this queue', parse.queueName)
    .option('--json', 'print JSON')
    .action(async (ids: string[], flags: { broker?: string; namespace?: string; queue?: string; json?: boolean }) => {
      const { count, notDead } = await withBroker(flags, (b) => changeDead(b, 'delete', ids, flags.queue));
      if (flags.json) printJson({ deleted: count, notDead });
      else process.stdout.write(`deleted ${count} dead job(s)\n`);
      if (notDead.length > 0) {
        const where = flags.queue === undefined ? 'the dead set' : `the dead set of queue ${flags.queue}`;
        process.stderr.write(`error: not in ${where}: ${notDead.join(', ')}\n`);
        process.exitCode = 1;
      }
    });
  dead
    .command('purge')
    .description('drop dead jobs')
    .addOption(brokerOption())
    .addOption(namespaceOption())
    .option('-q, --queue <name>', 'only this queue', parse.queueName)
    .option('--json', 'print JSON')
    .action(async (flags: { broker?: string; namespace?: string; queue?: string; json?: boolean }) => {
      const n = await withBroker(flags, async (b) => {
        let total = 0;
        for (const queue of await queuesOf(b, flags.queue)) total += await b.purgeDead(queue);
        return total;
      });
      if (flags.json) printJson({ purged: n });
      else process.stdout.write(`purged ${n} dead job(s)\n`);
    });
}
