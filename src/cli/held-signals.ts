/**
 * Signals that arrive while the CLI loads, before a command has handlers for
 * them. Without a listener Node applies the default action (SIGTERM and
 * SIGHUP end the process, SIGTSTP, SIGTTIN and SIGTTOU stop it), so a
 * `prefork worker` signalled in its first few hundred ms died without an
 * orderly stop, or stood suspended. main.ts holds them first; the
 * worker command takes them over once its handlers are in place, and every
 * other command lets them go, re-raised, so it ends as it always has.
 */

/** The signals held: those whose default action would end or suspend the process, and a worker handles. */
const HELD: readonly NodeJS.Signals[] = [
  'SIGTERM',
  'SIGINT',
  'SIGQUIT',
  'SIGHUP',
  'SIGUSR1',
  'SIGTSTP',
  'SIGTTIN',
  'SIGTTOU',
];

let held: NodeJS.Signals[] | undefined;
const hold = (signal: NodeJS.Signals): void => void held?.push(signal);

/** From now until takeHeldSignals() or releaseHeldSignals(), these signals are kept, in order. */
export function holdSignals(): void {
  if (held !== undefined) return;
  held = [];
  for (const signal of HELD) process.on(signal, hold);
}

/** Stops holding: returns the signals held so far, in order, for handlers now in place to act on. */
export function takeHeldSignals(): NodeJS.Signals[] {
  for (const signal of HELD) process.off(signal, hold);
  const taken = held ?? [];
  held = undefined;
  return taken;
}

/**
 * For a command that does not take them over: stops holding, and the first
 * signal held, if any, is raised again with no listener left, so its
 * default action ends (or suspends) the process as it would have.
 */
export function releaseHeldSignals(): void {
  const [first] = takeHeldSignals();
  if (first !== undefined) process.kill(process.pid, first);
}
