import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { deathSignalLauncher, withDeathSignal } from '../../../dist/pool/death-signal.js';

describe('the children’s death signal (setpriv --pdeathsig)', () => {
  it('wraps the node command line in the launcher', () => {
    expect(withDeathSignal('/usr/bin/setpriv', process.execPath, ['--max-old-space-size=64', 'main.js'])).toEqual({
      command: '/usr/bin/setpriv',
      args: ['--pdeathsig', 'KILL', '--', process.execPath, '--max-old-space-size=64', 'main.js'],
    });
  });

  it('starts the command as is without a launcher', () => {
    expect(withDeathSignal(undefined, process.execPath, ['main.js'])).toEqual({
      command: process.execPath,
      args: ['main.js'],
    });
  });

  it('starts an execPath that is not an executable file as is, so spawn reports its own error', () => {
    expect(withDeathSignal('/usr/bin/setpriv', '/no/such/node', ['main.js'])).toEqual({
      command: '/no/such/node',
      args: ['main.js'],
    });
  });

  it.runIf(process.platform === 'linux' && existsSync('/usr/bin/setpriv'))(
    'finds this machine’s setpriv (the one the no-orphans tests rely on)',
    () => {
      expect(deathSignalLauncher()).toBe('/usr/bin/setpriv');
    },
  );
});
