// Parses the command line and runs the command (main.ts loads this once the signals are held).
import { CommanderError } from 'commander';
import { OptionError, messageOf } from '../errors.js';
import { asFlagError } from './flag-names.js';
import { buildProgram } from './program.js';
import { UsageError } from './usage-error.js';

const EXIT_USAGE = 2;
const program = buildProgram();

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
