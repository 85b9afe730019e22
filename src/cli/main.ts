#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { OptionError, messageOf } from '../errors.js';
import { registerAdmin } from './commands/admin.js';
import { registerControl } from './commands/control.js';
import { registerDemo } from './commands/demo.js';
import { registerEnqueue } from './commands/enqueue.js';
import { registerResult } from './commands/result.js';
import { registerWorker } from './commands/worker.js';
import { asFlagError } from './flag-names.js';
import { UsageError } from './usage-error.js';

const EXIT_USAGE = 2;
const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

const program = new Command('prefork')
  .description('a prefork multi-process task worker for Node.js, fed by Redis')
  .version(version)
  .showSuggestionAfterError()
  .exitOverride();
registerWorker(program);
registerEnqueue(program);
registerResult(program);
registerAdmin(program);
registerControl(program);
registerDemo(program);
for (const command of program.commands) {
  command.exitOverride();
  for (const sub of command.commands) sub.exitOverride();
}

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) {
    // commander has already printed its one-line message (naming the flag and the value).
    process.exit(err.exitCode === 0 ? 0 : EXIT_USAGE);
  }
  if (err instanceof UsageError || err instanceof OptionError) {
    const usage = err instanceof OptionError ? asFlagError(err) : err;
    process.stderr.write(`error: ${usage.message}\n`);
    process.exit(EXIT_USAGE);
  }
  process.stderr.write(`error: ${messageOf(err)}\n`);
  process.exit(1);
}
