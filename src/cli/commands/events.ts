import type { Command } from 'commander';
import { brokerOption, namespaceOption } from '../broker-flags.js';
import { describeEvent, type NodeEventType } from '../../events/node-event.js';
import { followEvents } from '../../events/follow.js';
import { createStderrLogger, envLogLevel } from '../../logger.js';
import { withBroker } from '../connect.js';
import { jsonText } from '../json-text.js';
import * as parse from '../parsers.js';

interface EventsFlags {
  broker?: string;
  namespace?: string;
  follow?: boolean;
  json?: boolean;
  task?: string;
  node?: string;
  type?: NodeEventType[];
  last: number;
}

export function registerEvents(program: Command): void {
  program
    .command('events')
    .description(
      'print the events of every node: jobs received, started, succeeded, failed, retried, lost, deferred by a rate limit; children; scaling; nodes',
    )
    .addOption(brokerOption())
    .addOption(namespaceOption())
    .option('-f, --follow', 'keep printing events as they come (until Ctrl-C)')
    .option('--json', 'one JSON object per line (NDJSON)')
    .option('--task <name>', "only this task's job events")
    .option('--node <name>', "only this node's events", parse.nodeName)
    .option('--type <types>', 'only these types, comma-separated (e.g. job-failed,job-lost)', parse.eventTypes)
    .option('-n, --last <n>', 'start with the last n events in the stream', parse.nonNegativeInt, 50)
    .action((flags: EventsFlags) => printEvents(flags));
}

async function printEvents(flags: EventsFlags): Promise<void> {
  const stop = new AbortController();
  const onSignal = (): void => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  // A reader that went away (`| head`) ends the command quietly.
  process.stdout.on('error', () => stop.abort());
  try {
    await withBroker(flags, async (broker) => {
      const events = followEvents(
        broker,
        { recent: flags.last, follow: flags.follow === true, task: flags.task, node: flags.node, types: flags.type },
        stop.signal,
        createStderrLogger(envLogLevel('warn')),
      );
      for await (const e of events) {
        if (stop.signal.aborted) break;
        process.stdout.write(`${flags.json === true ? jsonText(e) : describeEvent(e)}\n`);
      }
    });
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
