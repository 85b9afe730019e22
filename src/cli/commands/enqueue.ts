import type { Command } from 'commander';
import type { EnqueueOptions } from '../../client.js';
import { withClient } from '../connect.js';
import * as parse from '../parsers.js';
import { printRecord } from '../print.js';

interface EnqueueFlags {
  broker?: string;
  queue: string;
  delay?: number;
  retries?: number;
  wait?: boolean;
  timeout?: number;
  json?: boolean;
}

export function registerEnqueue(program: Command): void {
  program
    .command('enqueue')
    .description('enqueue a job; arguments are JSON (a bare word is a string)')
    .argument('<task>', 'task name')
    .argument('[args...]', 'task arguments, e.g. 3 \'"text"\' \'{"a":1}\'')
    .option('-b, --broker <url>', 'broker URL', parse.brokerUrl)
    .option('-q, --queue <name>', 'queue', parse.queueName, 'default')
    .option('--delay <duration>', 'run after this long (e.g. 30s)', parse.duration)
    .option('--retries <n>', 'retries after the first attempt', parse.nonNegativeInt)
    .option('--wait', 'wait for the result and print it')
    .option('--timeout <duration>', 'with --wait: give up after this long', parse.timerDuration)
    .option('--json', 'print JSON')
    .action((task: string, args: string[], flags: EnqueueFlags) => enqueue(task, args.map(parse.jsonArg), flags));
}

async function enqueue(task: string, args: unknown[], flags: EnqueueFlags): Promise<void> {
  const options: EnqueueOptions = { queue: flags.queue };
  if (flags.delay !== undefined) options.delay = flags.delay;
  if (flags.retries !== undefined) options.retries = flags.retries;
  await withClient(flags.broker, async (client) => {
    const handle = await client.enqueue(task, args, options);
    if (!flags.wait) {
      process.stdout.write(flags.json ? `${JSON.stringify({ id: handle.id })}\n` : `${handle.id}\n`);
      return;
    }
    const record = await client.waitForResult(handle.id, flags.timeout, true);
    printRecord(record, flags.json === true);
    if (record.state !== 'SUCCESS') process.exitCode = 1;
  });
}
