/**
 * Test files that empty a Redis database of their own (emptyRedisDb) run in
 * parallel: two of them on one number would flush each other's jobs mid-test.
 * Each number belongs to one file.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const TEST = fileURLToPath(new URL('../', import.meta.url));

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(path);
    return entry.name.endsWith('.test.ts') ? [relative(TEST, path)] : [];
  });
}

/** The database numbers a file empties: a number given to emptyRedisDb, or its DB constant. */
function databasesOf(text: string): number[] {
  const constant = /^const DB = (\d+);$/m.exec(text)?.[1];
  const found: number[] = [];
  for (const [, arg] of text.matchAll(/emptyRedisDb\((\w+)\)/g)) {
    if (arg === 'DB' && constant !== undefined) found.push(Number(constant));
    else if (arg !== undefined && /^\d+$/.test(arg)) found.push(Number(arg));
  }
  return [...new Set(found)];
}

describe('Redis databases of the test files', () => {
  it('each number is emptied by one file only', () => {
    const owners = new Map<number, string[]>();
    for (const file of testFiles(TEST)) {
      for (const db of databasesOf(readFileSync(join(TEST, file), 'utf8')))
        owners.set(db, [...(owners.get(db) ?? []), file]);
    }
    expect(owners.size).toBeGreaterThan(1);
    const shared = [...owners].filter(([, files]) => files.length > 1);
    expect(shared, 'database numbers used by more than one test file').toEqual([]);
  });
});
