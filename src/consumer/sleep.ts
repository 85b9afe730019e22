/**
 * Waits `ms`, or less if `signal` aborts; never rejects. The 'abort' listener
 * is removed when the timer fires, so a long-lived signal shared by many
 * retry loops does not collect one listener per wait.
 */
export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
