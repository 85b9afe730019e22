import type { Command } from 'commander';
import { brokerOption, namespaceOption } from '../broker-flags.js';
import type { ListedState } from '../../broker/types.js';
import { withBroker } from '../connect.js';
import { argsText, isoTime, listedJobJson } from '../job-format.js';
import * as parse from '../parsers.js';
import { printJson, printTable } from '../print.js';

interface JobsFlags {
  broker?: string;
  namespace?: string;
  state: ListedState;
  limit: number;
  cursor?: string;
  json?: boolean;
}

/** `prefork jobs <queue>`: one page of a queue's jobs in one state, and the cursor of the next. */
export function registerJobs(program: Command): void {
  program
    .command('jobs')
    .description("page through a queue's jobs (waiting, delayed or dead) without reading it whole")
    .argument('<queue>', 'queue name', parse.queueName)
    .addOption(brokerOption())
    .addOption(namespaceOption())
    .option(
      '--state <state>',
      'waiting (in fetch order), delayed (soonest due first) or dead (newest first)',
      parse.listedState,
      'waiting',
    )
    .option('--limit <n>', 'at most this many jobs on the page (up to 10000)', parse.pageLimit, 20)
    .option('--cursor <cursor>', 'start where the previous page ended (it prints the cursor)')
    .option('--json', 'print JSON: {queue, state, jobs, next}')
    .action(async (queue: string, flags: JobsFlags) => {
      const page = await withBroker(flags, (b) => b.listJobs(queue, flags.state, flags.limit, flags.cursor));
      if (flags.json) {
        printJson({ queue, state: flags.state, jobs: page.jobs.map(listedJobJson), next: page.next ?? null });
        return;
      }
      const header = ['ID', 'TASK', 'ARGS', 'RETRIES', 'ENQUEUED'];
      if (flags.state === 'delayed') header.push('DUE');
      if (flags.state === 'dead') header.push('DIED', 'REASON');
      printTable(
        header,
        page.jobs.map((l) => {
          const row = [
            l.job.id,
            l.job.task,
            argsText({ payload: l.job.payload }),
            l.job.attempt,
            isoTime(l.job.enqueuedAt),
          ];
          if (flags.state === 'delayed') row.push(isoTime(l.dueAt));
          if (flags.state === 'dead') row.push(isoTime(l.diedAt), l.reason ?? '');
          return row;
        }),
      );
      if (page.next !== undefined)
        process.stdout.write(
          `next page: prefork jobs ${queue} --state ${flags.state} --limit ${flags.limit} --cursor ${page.next}\n`,
        );
    });
}
