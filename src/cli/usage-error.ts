import { PreforkError } from '../errors.js';

/** A bad flag or argument: main.ts prints its message on one line and exits with code 2. */
export class UsageError extends PreforkError {
  static override readonly code: string = 'PREFORK_USAGE';
}
