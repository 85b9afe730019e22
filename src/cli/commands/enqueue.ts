import type { Command } from 'commander';
import { brokerOption, namespaceOption } from '../broker-flags.js';
import type { BrokerMembership } from '../../broker/types.js';
import type { EnqueueOptions } from '../../client.js';
import type { BackoffOptions } from '../../job-types.js';
import { messageOf } from '../../errors.js';
import { withClient } from '../connect.js';
import { checkLimitFlags } from '../flag-names.js';
import { noteOnInterrupt } from '../interrupt.js';
import * as parse from '../parsers.js';
import { printJson, printRecord } from '../print.js';
import { UsageError } from '../usage-error.js';

interface EnqueueFlags {
  broker?: string;
  namespace?: string;
  queue: string;
  delay?: number;
  eta?: number;
  retries?: number;
  backoff?: BackoffOptions;
  timeLimit?: number;
  softTimeLimit?: number;
  rateLimit?: string;
  id?: string;
  unique?: boolean;
  uniqueKey?: string;
  uniqueTtl?: number;
  ignoreResult?: boolean;
  wait?: boolean;
  timeout?: number;
  json?: boolean;
}

export function registerEnqueue(program: Command): void {
  program
    .command('enqueue')
    .description('enqueue a job; arguments are JSON (a bare word is a string)')
    .argument('<task>', 'task name', parse.taskName)
    .argument('[args...]', 'task arguments, e.g. 3 \'"text"\' \'{"a":1}\'')
    .addOption(brokerOption())
    .addOption(namespaceOption())
    .option('-q, --queue <name>', 'queue', parse.queueName, 'default')
    .option('--delay <duration>', 'run after this long (e.g. 30s, 5m)', parse.delay)
    .option(
      '--eta <time>',
      'run at this time: an ISO date-time (2030-01-31T09:00:00Z) or epoch ms (13 digits)',
      parse.eta,
    )
    .option('--retries <n>', 'retries after the first attempt (default: the task’s own, else 0)', parse.nonNegativeInt)
    .option(
      '--backoff <spec>',
      'how retries wait: TYPE[:DELAY[:CAP]] (fixed:5s, exponential:1s:10m) or JSON ({"type":"fixed","delay":"5s"})',
      parse.backoff,
    )
    .option('--time-limit <duration>', 'hard limit for this job (e.g. 5m, 300ms): its child is killed', parse.timeLimit)
    .option(
      '--soft-time-limit <duration>',
      "soft limit for this job (e.g. 4m): the job's signal aborts",
      parse.timeLimit,
    )
    .option(
      '--rate-limit <rate>',
      "most starts of this job's task across the cluster, e.g. 100/s, 10/m, 1000/h",
      parse.rateLimit,
    )
    .option('--id <id>', 'your own job id (default: a random UUID); an id known already adds nothing', parse.jobId)
    .option('--unique', 'add nothing while a job of this task with these arguments waits, is delayed or runs')
    .option('--unique-key <key>', 'as --unique, with your own key instead of the task and arguments', parse.uniqueKey)
    .option(
      '--unique-ttl <duration>',
      'with --unique or --unique-key: release the key after this long (e.g. 10m)',
      parse.expiry,
    )
    .option('--ignore-result', 'store no result')
    .option('--no-ignore-result', 'store the result even when the task is defined with ignoreResult')
    .option('--wait', 'wait for the result and print it')
    .option(
      '--timeout <duration>',
      'with --wait: give up after this long (e.g. 30s, 5m; default: no limit)',
      parse.timerDuration,
    )
    .option('--json', 'print JSON')
    .action((task: string, args: string[], flags: EnqueueFlags) => enqueue(task, args.map(parse.jsonArg), flags));
}

function optionsOf(flags: EnqueueFlags): EnqueueOptions {
  if (flags.delay !== undefined && flags.eta !== undefined) throw new UsageError('give --delay or --eta, not both');
  if (flags.ignoreResult === true && flags.wait)
    throw new UsageError('--wait and --ignore-result: a job that stores no result has none to wait for');
  if (flags.timeout !== undefined && !flags.wait)
    throw new UsageError('--timeout is how long --wait waits: add --wait');
  checkLimitFlags(flags.timeLimit, flags.softTimeLimit);
  const options: EnqueueOptions = { queue: flags.queue };
  if (flags.delay !== undefined) options.delay = flags.delay;
  if (flags.eta !== undefined) options.eta = flags.eta;
  if (flags.retries !== undefined) options.retries = flags.retries;
  if (flags.backoff !== undefined) options.backoff = flags.backoff;
  if (flags.timeLimit !== undefined) options.timeLimit = flags.timeLimit;
  if (flags.softTimeLimit !== undefined) options.softTimeLimit = flags.softTimeLimit;
  if (flags.rateLimit !== undefined) options.rateLimit = flags.rateLimit;
  if (flags.id !== undefined) options.id = flags.id;
  if (flags.uniqueTtl !== undefined && flags.unique !== true && flags.uniqueKey === undefined)
    throw new UsageError('--unique-ttl is how long --unique holds its key: add --unique or --unique-key');
  if (flags.unique === true || flags.uniqueKey !== undefined) {
    options.unique = {};
    if (flags.uniqueKey !== undefined) options.unique.key = flags.uniqueKey;
    if (flags.uniqueTtl !== undefined) options.unique.ttl = flags.uniqueTtl;
  }
  if (flags.ignoreResult !== undefined) options.ignoreResult = flags.ignoreResult;
  return options;
}

async function enqueue(task: string, args: unknown[], flags: EnqueueFlags): Promise<void> {
  const options = optionsOf(flags);
  await withClient(flags, async (client, broker) => {
    const handle = await client.enqueue(task, args, options);
    // The job it duplicates has the id given, or else holds the unique key.
    if (handle.duplicate)
      process.stderr.write(
        `nothing added: job ${handle.id} (the same ${handle.id === options.id ? 'id' : 'unique key'}) is known already\n`,
      );
    if (!flags.wait) {
      if (flags.json) printJson(handle.duplicate ? { id: handle.id, duplicate: true } : { id: handle.id });
      else process.stdout.write(`${handle.id}\n`);
      return;
    }
    const id = handle.id;
    const stopNoting = noteOnInterrupt(
      `interrupted: job ${id} stays enqueued and runs once a node takes it; its result: prefork result ${id}`,
    );
    let record;
    try {
      await warnIfNobodyConsumes(broker, flags.queue, id);
      // A duplicate's result is announced to whoever enqueued the job: read it instead.
      record = await client.waitForHandle(handle, flags.timeout, !handle.duplicate);
    } finally {
      stopNoting();
    }
    printRecord(record, flags.json === true);
    if (record.state !== 'SUCCESS') process.exitCode = 1;
  });
}

/**
 * --wait on a queue no live node consumes would wait for ever without a
 * word: say so (the job stays queued). Only advice: the job is enqueued, so
 * a failure to list the nodes is a warning naming it, and the wait goes on.
 */
async function warnIfNobodyConsumes(
  broker: Pick<BrokerMembership, 'listNodes'>,
  queue: string,
  id: string,
): Promise<void> {
  let nodes;
  try {
    nodes = await broker.listNodes();
  } catch (err) {
    process.stderr.write(
      `warning: job ${id} is enqueued, but the worker nodes could not be listed (${messageOf(err)}); waiting for its result\n`,
    );
    return;
  }
  if (nodes.some((n) => n.queues.includes(queue))) return;
  const running = nodes.length === 0 ? 'no worker node is running' : `no live worker node consumes queue ${queue}`;
  process.stderr.write(
    `warning: ${running}; waiting until one does (start one with: prefork worker --app <module> -Q ${queue})\n`,
  );
}
