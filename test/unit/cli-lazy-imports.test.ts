/**
 * What a CLI command loads: the static imports of the built CLI reach
 * neither the Worker (with its pool and consumer), nor the Client, nor the
 * demo. Each command imports what it runs when it runs, so `prefork worker`
 * starts without the Client and the demo, and a one-shot command (`prefork
 * enqueue`) without the Worker. Read from dist/: the JavaScript as it runs,
 * type-only imports erased.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const DIST = fileURLToPath(new URL('../../dist/', import.meta.url));

/** The modules of dist/ a module imports statically (import and export-from declarations; not import()). */
function staticImports(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(join(DIST, file), 'utf8'), ts.ScriptTarget.Latest);
  const out: string[] = [];
  for (const statement of source.statements) {
    const spec =
      ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement) ? statement.moduleSpecifier : undefined;
    if (spec === undefined || !ts.isStringLiteral(spec) || !spec.text.startsWith('.')) continue;
    out.push(
      relative(DIST, join(DIST, dirname(file), spec.text))
        .split('\\')
        .join('/'),
    );
  }
  return out;
}

/** Every module of dist/ reached from `entry` by static imports. */
function closure(entry: string): Set<string> {
  const seen = new Set<string>([entry]);
  const queue = [entry];
  for (let file = queue.pop(); file !== undefined; file = queue.pop())
    for (const next of staticImports(file))
      if (!seen.has(next)) {
        seen.add(next);
        queue.push(next);
      }
  return seen;
}

describe('the CLI loads what a command runs, when it runs', () => {
  // main.js holds the signals first, then loads run.js: what the CLI loads before a command runs is both.
  const loaded = new Set([...closure('cli/main.js'), ...closure('cli/run.js')]);

  it('its static imports reach neither the Worker, the pool, the Client nor the demo', () => {
    expect([...loaded].filter((m) => ['worker.js', 'pool/pool.js', 'client.js', 'demo/run.js'].includes(m))).toEqual(
      [],
    );
  });

  it('the commands import them when they run', () => {
    const source = (file: string): string => readFileSync(join(DIST, file), 'utf8');
    expect(source('cli/main.js')).toMatch(/await import\('\.\/run\.js'\)/);
    expect(source('cli/commands/worker.js')).toMatch(/await import\('\.\.\/\.\.\/worker\.js'\)/);
    expect(source('cli/commands/demo.js')).toMatch(/await import\('\.\.\/\.\.\/demo\/run\.js'\)/);
    expect(source('cli/connect.js')).toMatch(/await import\('\.\.\/client\.js'\)/);
  });
});
