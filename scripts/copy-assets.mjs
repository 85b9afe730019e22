// tsc copies only .ts output: this copies the Lua scripts next to the compiled
// broker, and the dashboard's page (HTML, CSS, browser JavaScript: served as
// they are, no build step), so dist/ is self-contained.
import { chmodSync, cpSync, existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';

const DASHBOARD_ASSETS = join('src', 'dashboard', 'assets');

function walk(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path);
    else if (name.endsWith('.lua') || path.startsWith(DASHBOARD_ASSETS)) {
      const to = path.replace(/^src/, 'dist');
      mkdirSync(dirname(to), { recursive: true });
      cpSync(path, to);
    }
  }
}
if (existsSync('src')) walk('src');
// The CLI's entry as a command (`./dist/cli/main.js`, a bin link in a clone): tsc writes it 0644.
const CLI = join('dist', 'cli', 'main.js');
if (existsSync(CLI)) chmodSync(CLI, 0o755);
