import { constants } from 'node:os';

/**
 * While a one-shot command waits on something it started (`enqueue --wait`),
 * SIGINT (Ctrl-C) and SIGTERM end it as they would have (exit 128 + the
 * signal's number), after one line on stderr saying what it leaves behind:
 * the job runs on without the command, and its id was not printed yet.
 * Returns the function that takes the handlers off once the wait is over.
 */
export function noteOnInterrupt(note: string): () => void {
  const handle = (signal: NodeJS.Signals): void => {
    process.stderr.write(`${note}\n`);
    process.exit(128 + constants.signals[signal]);
  };
  process.once('SIGINT', handle);
  process.once('SIGTERM', handle);
  return () => {
    process.off('SIGINT', handle);
    process.off('SIGTERM', handle);
  };
}
