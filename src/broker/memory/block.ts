import { timerMs } from '../../util/units.js';

/** How a blocked call learns that it may be able to finish now. */
export type Subscribe = (retry: () => void) => () => void;

/**
 * Blocks until `attempt()` gives an answer, `timeoutMs` passes, `signal`
 * aborts or `cancels` is told to end every wait (the handle closed). The
 * attempt is tried once now, then only when `subscribe` calls back: nothing
 * polls. Resolves undefined when the wait ended without an answer.
 */
export function blockUntil<T>(
  attempt: () => T | undefined,
  subscribe: Subscribe,
  timeoutMs: number,
  signal: AbortSignal | undefined,
  cancels: Set<() => void>,
): Promise<T | undefined> {
  const first = attempt();
  if (first !== undefined || signal?.aborted === true || timeoutMs <= 0) return Promise.resolve(first);
  return new Promise((resolve) => {
    let done = false;
    const finish = (value: T | undefined): void => {
      if (done) return;
      done = true;
      clearTimeout(deadline);
      unsubscribe();
      signal?.removeEventListener('abort', cancel);
      cancels.delete(cancel);
      resolve(value);
    };
    const cancel = (): void => finish(undefined);
    const retry = (): void => {
      if (done) return;
      const value = attempt();
      if (value !== undefined) finish(value);
    };
    const deadline = setTimeout(cancel, timerMs(timeoutMs));
    const unsubscribe = subscribe(retry);
    signal?.addEventListener('abort', cancel, { once: true });
    cancels.add(cancel);
  });
}
