import { pino, type Logger, type LoggerOptions } from 'pino';
import { OptionError } from './errors.js';

export type { Logger };

/** pino's levels, and 'silent'. */
export const LOG_LEVELS: readonly string[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/**
 * $PREFORK_LOG_LEVEL, else `fallback`. Checked here: pino looks a level up
 * on a plain object, so "toString" would pass its check and break the logger.
 */
export function envLogLevel(fallback: string): string {
  const level = process.env.PREFORK_LOG_LEVEL;
  if (level === undefined || level === '') return fallback;
  if (!LOG_LEVELS.includes(level))
    throw new OptionError('$PREFORK_LOG_LEVEL', level, `one of ${LOG_LEVELS.join(', ')}`);
  return level;
}

/**
 * What every logger here shares. An error is logged with its own message
 * and its cause as `err.cause`: pino's default serializer appends each
 * cause's message to the error's, and prefork's errors already name their
 * cause, so a line read "...: ERR DB index is out of range: ERR DB index is out of range".
 */
const BASE: LoggerOptions = {
  base: { pid: process.pid },
  serializers: { err: pino.stdSerializers.errWithCause },
};

/**
 * The only place pino is configured. Library components take a child of this
 * (or of a logger the user passes in) with their own context.
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  return pino({ ...BASE, ...options, level: options.level ?? envLogLevel('info') }, destination(1));
}

/**
 * Synchronous writes to `fd`. pino's default (asynchronous) destination
 * flushes what is still queued when the process exits, and retries a write to
 * a closed pipe (EPIPE: `| head -3` went away) for ever: the exit hung. A
 * synchronous one has nothing queued, and on EPIPE it stops writing.
 */
function destination(fd: 1 | 2): pino.DestinationStream {
  return pino.destination({ dest: fd, sync: true });
}

/**
 * A logger for the CLI's one-shot commands (enqueue, result, inspect, ...):
 * on stderr, so their stdout stays parseable (`--json`).
 */
export function createStderrLogger(level: string): Logger {
  return pino({ ...BASE, level }, destination(2));
}

/**
 * The CLI's logger: JSON lines for machines, pino-pretty when a person is
 * watching a terminal.
 */
export function createCliLogger(level: string): Logger {
  if (process.stdout.isTTY) {
    return pino({
      ...BASE,
      level,
      transport: {
        target: 'pino-pretty',
        options: { colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'hostname' },
      },
    });
  }
  return createLogger({ level });
}

let root: Logger | undefined;
let clientRoot: Logger | undefined;

/** The default logger, created on first use so that importing prefork costs nothing. */
export function defaultLogger(): Logger {
  root ??= createLogger();
  return root;
}

/** The CLI sets its logger as the default, so components created without one log through it. */
export function setDefaultLogger(logger: Logger): void {
  root = logger;
}

/**
 * The Client's logger when none is given: stderr, warnings and errors only
 * ($PREFORK_LOG_LEVEL says otherwise), so an application's stdout stays its own.
 */
export function defaultClientLogger(): Logger {
  clientRoot ??= createStderrLogger(envLogLevel('warn'));
  return clientRoot;
}
