import { pino, type Logger, type LoggerOptions } from 'pino';

export type { Logger };

/**
 * The only place pino is configured. Library components take a child of this
 * (or of a logger the user passes in) with their own context.
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  return pino({ level: process.env.PREFORK_LOG_LEVEL ?? 'info', base: { pid: process.pid }, ...options });
}

let root: Logger | undefined;

/** The default logger, created on first use so that importing prefork costs nothing. */
export function defaultLogger(): Logger {
  root ??= createLogger();
  return root;
}
