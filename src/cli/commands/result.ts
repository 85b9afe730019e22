import type { Command } from 'commander';
import { withClient } from '../connect.js';
import * as parse from '../parsers.js';
import { printJson, printRecord } from '../print.js';

export function registerResult(program: Command): void {
  program
    .command('result')
    .description("print a job's state and outcome")
    .argument('<id>', 'job id')
    .option('-b, --broker <url>', 'broker URL', parse.brokerUrl)
    .option('--json', 'print JSON')
    .action(async (id: string, flags: { broker?: string; json?: boolean }) => {
      await withClient(flags.broker, async (client) => {
        const record = await client.getResult(id);
        if (record === undefined) {
          // No key: never seen, still waiting, or its result expired (or was ignored).
          if (flags.json) printJson({ id, state: 'PENDING' });
          else
            process.stdout.write(
              `id:       ${id}\nstate:    PENDING (no record: waiting, or running on a node without --track-started, or its result expired or was ignored)\n`,
            );
          return;
        }
        printRecord(record, flags.json === true);
      });
    });
}
