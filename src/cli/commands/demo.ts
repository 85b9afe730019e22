import type { Command } from 'commander';
import * as parse from '../parsers.js';

export function registerDemo(program: Command): void {
  program
    .command('demo')
    .description('run a demo of the pool on the embedded memory:// broker (no Redis needed)')
    .option('--jobs <n>', 'how many jobs', parse.positiveInt, 240)
    .option('-c, --concurrency <n>', 'child processes', parse.processCount, 3)
    .action(async (flags: { jobs: number; concurrency: number }) => {
      // Loaded here: only this command runs the demo.
      const { runDemo } = await import('../../demo/run.js');
      await runDemo({ jobs: flags.jobs, concurrency: flags.concurrency, out: process.stdout });
    });
}
