import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { registerAdmin } from './commands/admin.js';
import { registerControl } from './commands/control.js';
import { registerDashboard } from './commands/dashboard.js';
import { registerDemo } from './commands/demo.js';
import { registerEnqueue } from './commands/enqueue.js';
import { registerInspect } from './commands/inspect.js';
import { registerJobs } from './commands/jobs.js';
import { registerEvents } from './commands/events.js';
import { registerResult } from './commands/result.js';
import { registerSchedule } from './commands/schedule.js';
import { registerRevoke } from './commands/revoke.js';
import { registerWorker } from './commands/worker.js';
import { releaseHeldSignals } from './held-signals.js';

const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

/** Every command and flag of `prefork`, parsed by main.ts; docs/cli.md is checked against it. */
export function buildProgram(): Command {
  const program = new Command('prefork')
    .description('a prefork multi-process task worker for Node.js, fed by Redis')
    .version(version)
    .showSuggestionAfterError()
    .exitOverride();
  registerWorker(program);
  registerEnqueue(program);
  registerResult(program);
  registerAdmin(program);
  registerInspect(program);
  registerJobs(program);
  registerControl(program);
  registerSchedule(program);
  registerRevoke(program);
  registerEvents(program);
  registerDashboard(program);
  registerDemo(program);
  // Only the worker takes over the signals main.ts held while the CLI loaded; any other command lets them act as they would have.
  program.hook('preAction', (_, action) => {
    if (action.name() !== 'worker' || action.parent !== program) releaseHeldSignals();
  });
  for (const command of program.commands) {
    command.exitOverride();
    for (const sub of command.commands) sub.exitOverride();
  }
  return program;
}
