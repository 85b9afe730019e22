// Debian's chromium for the dashboard's browser tests and screenshots
// (driven by playwright-core): installed with apt-get when missing, as the
// test setup does for redis-server. Never a browser downloaded at test time.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const PATHS = ['/usr/bin/chromium', '/usr/bin/chromium-browser'];

/** The path of Debian's chromium, installed with apt-get first when it is not there (the test machines run as root). */
export function ensureChromiumInstalled() {
  const found = PATHS.find((p) => existsSync(p));
  if (found !== undefined) return found;
  execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit' });
  execFileSync('apt-get', ['install', '-y', '-qq', 'chromium'], {
    stdio: 'inherit',
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
  const installed = PATHS.find((p) => existsSync(p));
  if (installed === undefined) throw new Error('apt-get installed chromium, but no chromium binary was found');
  return installed;
}

/** Flags for chromium run as root in a container: no sandbox (it needs user namespaces), no GPU. */
export const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'];
