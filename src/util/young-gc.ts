import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

type GcFunction = (options: { type: 'minor' }) => void;

/** undefined: not looked up yet; null: this V8 gives none. */
let gc: GcFunction | null | undefined;

/**
 * V8's own collector function, without putting a `gc` global into the
 * process: one made visible for a fresh context only, and hidden again. A
 * process started with --expose-gc already has one.
 */
function lookUp(): GcFunction | null {
  const global = (globalThis as { gc?: unknown }).gc;
  if (typeof global === 'function') return global as GcFunction;
  try {
    setFlagsFromString('--expose-gc');
    try {
      const found = runInNewContext('gc') as unknown;
      return typeof found === 'function' ? (found as GcFunction) : null;
    } finally {
      setFlagsFromString('--no-expose-gc');
    }
  } catch {
    return null;
  }
}

/**
 * One young-generation collection (a scavenge: it touches only live young
 * objects, a millisecond or so). After a few seconds of little allocation V8
 * then shrinks the new space, which loading modules grew to several MiB and
 * which an idle process otherwise keeps. Does nothing where V8 gives no
 * collector function. Returns true if it ran.
 */
export function collectYoung(): boolean {
  if (gc === undefined) gc = lookUp();
  if (gc === null) return false;
  gc({ type: 'minor' });
  return true;
}
