import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';

/**
 * Linux's parent-death signal (prctl PR_SET_PDEATHSIG), set by util-linux's
 * `setpriv --pdeathsig KILL` before it execs the child: the kernel kills a
 * child the moment its pool's process dies, even one stuck in a busy loop,
 * with no watchdog thread polling for it (about 7 MiB per child). Elsewhere,
 * or without a setpriv that knows the flag, the child's watchdog thread does it.
 */
const CANDIDATES = ['/usr/bin/setpriv', '/bin/setpriv'];

let found: string | null | undefined;

/** The setpriv to spawn children through, or undefined when this system has none that works. Checked once. */
export function deathSignalLauncher(): string | undefined {
  if (found === undefined) found = probe();
  return found ?? undefined;
}

function probe(): string | null {
  if (process.platform !== 'linux') return null;
  for (const path of CANDIDATES) {
    if (!executable(path)) continue;
    // util-linux before 2.33 has no --pdeathsig: try it once rather than parse a version.
    const r = spawnSync(path, ['--pdeathsig', 'KILL', '--', 'true'], { stdio: 'ignore', timeout: 5_000 });
    return r.status === 0 ? path : null;
  }
  return null;
}

/** The command line that starts `execPath args` with the death signal set, or as is without a launcher. */
export function withDeathSignal(
  launcher: string | undefined,
  execPath: string,
  args: readonly string[],
): { command: string; args: string[] } {
  // A node binary that cannot be run must fail as spawn's own ENOENT/EACCES, not as setpriv's exit 127.
  if (launcher === undefined || !executable(execPath)) return { command: execPath, args: [...args] };
  return { command: launcher, args: ['--pdeathsig', 'KILL', '--', execPath, ...args] };
}

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
