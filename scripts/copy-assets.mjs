// tsc copies only .ts output: this copies the Lua scripts next to the compiled
// broker so dist/ is self-contained.
import { cpSync, existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

function walk(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path);
    else if (name.endsWith('.lua')) cpSync(path, path.replace(/^src/, 'dist'));
  }
}
if (existsSync('src')) walk('src');
