import type { Logger } from 'pino';

export type StopMode = 'warm' | 'cold';

/**
 * The signal table (Celery's): SIGTERM and a first SIGINT stop warm (finish
 * jobs in flight, give back the rest); a second SIGINT or SIGQUIT stops cold
 * (kill the children; unfinished jobs go back).
 */
export function onStopSignals(log: Logger, stop: (mode: StopMode) => void): void {
  let interrupts = 0;
  const handle = (signal: NodeJS.Signals): void => {
    const mode: StopMode = signal === 'SIGQUIT' || (signal === 'SIGINT' && ++interrupts > 1) ? 'cold' : 'warm';
    log.warn(
      { signal },
      mode === 'warm'
        ? `${signal}: warm shutdown (finishing jobs in flight; ^C again for a cold shutdown)`
        : `${signal}: cold shutdown`,
    );
    stop(mode);
  };
  process.on('SIGTERM', handle);
  process.on('SIGINT', handle);
  process.on('SIGQUIT', handle);
}
