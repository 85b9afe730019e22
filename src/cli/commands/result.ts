import type { Command } from 'commander';
import { brokerOption, namespaceOption } from '../broker-flags.js';
import { withClient } from '../connect.js';
import * as parse from '../parsers.js';
import { printJson, printRecord } from '../print.js';
import { printWorkflow } from '../workflow-tree.js';

export function registerResult(program: Command): void {
  program
    .command('result')
    .description("print a job's state and outcome, or a workflow's tree with each member's state")
    .argument('<id>', 'job id or workflow id', parse.jobId)
    .addOption(brokerOption())
    .addOption(namespaceOption())
    .option('--json', 'print JSON')
    .action(async (id: string, flags: { broker?: string; namespace?: string; json?: boolean }) => {
      await withClient(flags, async (client) => {
        const workflow = await client.getWorkflowState(id);
        if (workflow !== undefined) {
          printWorkflow(workflow, flags.json === true);
          return;
        }
        const record = await client.getState(id);
        if (record === undefined) {
          // Celery's answer for an id it knows nothing of is PENDING too; `unknown` says which PENDING this is.
          if (flags.json) printJson({ id, state: 'PENDING', unknown: true });
          else
            process.stdout.write(
              `id:       ${id}\nstate:    PENDING (unknown: never enqueued, or it ended and its result expired or was not kept)\n`,
            );
          return;
        }
        printRecord(record, flags.json === true);
      });
    });
}
