/**
 * Test files that empty a Redis database of their own (emptyRedisDb) run in
 * parallel: two with the same number would flush each other's keys mid-run.
 * Each names its number once (`const DB = n;`), and no two share one.
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
    return entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

describe('Redis database numbers of the test files', () => {
  it('each file that empties a database names its own, and no two share one', () => {
    const owners = new Map<number, string[]>();
    for (const file of testFiles(TEST)) {
      const text = readFileSync(file, 'utf8');
      if (!/import \{[^}]*\bemptyRedisDb\b[^}]*\} from/.test(text)) continue;
      const name = relative(TEST, file);
      const declared = [...text.matchAll(/^const DB = (\d+);$/gm)].map((m) => Number(m[1]));
      expect(declared, `${name} declares its database once as 'const DB = n;'`).toHaveLength(1);
      const calls = [...text.matchAll(/emptyRedisDb\(([^)]*)\)/g)].map((m) => m[1]);
      expect(
        calls.filter((arg) => arg !== 'DB'),
        `${name} passes DB to emptyRedisDb`,
      ).toEqual([]);
      const db = declared[0]!;
      owners.set(db, [...(owners.get(db) ?? []), name]);
    }
    expect(owners.size).toBeGreaterThan(0);
    const shared = [...owners]
      .filter(([, files]) => files.length > 1)
      .map(([db, files]) => `${db}: ${files.join(', ')}`);
    expect(shared).toEqual([]);
  });
});
