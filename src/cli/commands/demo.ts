import type { Command } from 'commander';
import { runDemo } from '../../demo/run.js';
import * as parse from '../parsers.js';

export function registerDemo(program: Command): void {
  program
    .command('demo')
    .description('run a demo of the pool on the embedded memory:// broker (no Redis needed)')
    .option('--jobs <n>', 'how many jobs', parse.positiveInt, 240)
    .option('-c, --concurrency <n>', 'child processes', parse.positiveInt, 3)
    .action((flags: { jobs: number; concurrency: number }) =>
      runDemo({ jobs: flags.jobs, concurrency: flags.concurrency, out: process.stdout }),
    );
}
