/**
 * Waits `ms`, or less if `signal` aborts; never rejects. Resolves true when
 * the whole wait passed, false when the signal cut it short. The 'abort'
 * listener is removed when the timer fires, so a long-lived signal shared by
 * many retry loops does not collect one listener per wait.
 */
export function abortableSleep(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  if (ms <= 0) return Promise.resolve(true);
  return new Promise((resolve) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
