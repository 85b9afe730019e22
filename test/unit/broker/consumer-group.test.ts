/**
 * The Redis broker's consumer group is named once, by GROUP in keys.ts: the
 * TypeScript imports it and the Lua scripts get it as `local GROUP` from the
 * script loader, so neither spells the name out.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { GROUP } from '../../../dist/broker/redis/keys.js';

const REDIS = fileURLToPath(new URL('../../../src/broker/redis/', import.meta.url));

function files(dir: string, ending: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return files(path, ending);
    return entry.name.endsWith(ending) ? [path] : [];
  });
}

/** The files under src/broker/redis/ with `ending` that quote the group's name, with the line. */
function quoting(ending: string, except: string[] = []): string[] {
  const quoted = new RegExp(`(['"\`])${GROUP}\\1`);
  return files(REDIS, ending)
    .map((path) => relative(REDIS, path))
    .filter((file) => !except.includes(file))
    .flatMap((file) =>
      readFileSync(join(REDIS, file), 'utf8')
        .split('\n')
        .filter((line) => quoted.test(line))
        .map((line) => `${file}: ${line.trim()}`),
    );
}

describe('the consumer group', () => {
  it('is named in keys.ts only', () => {
    expect(GROUP).toMatch(/^\w+$/);
    expect(quoting('.ts', ['keys.ts'])).toEqual([]);
  });

  it('reaches the Lua scripts as GROUP, never spelled out', () => {
    expect(quoting('.lua')).toEqual([]);
    const uses = files(REDIS, '.lua').filter((path) => /\bGROUP\b/.test(readFileSync(path, 'utf8')));
    expect(uses.length).toBeGreaterThan(4);
  });
});
