/**
 * The docs point only at what the repository holds: every relative link of
 * the markdown files resolves to a file (and its #anchor to a heading or an
 * anchor there), and every markdown file a comment or a doc names exists in
 * the repository.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SKIP = new Set(['node_modules', 'dist', '.git', '.tmp', 'coverage']);

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    if (SKIP.has(name)) return [];
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : [path];
  });
}

const FILES = walk(ROOT).map((f) => relative(ROOT, f));
const MARKDOWN = FILES.filter((f) => f.endsWith('.md'));
const MARKDOWN_NAMES = new Set(MARKDOWN.map((f) => basename(f)));
const SOURCES = FILES.filter((f) => /^(src|test|bench|scripts)\//.test(f) && /\.(ts|js|mjs|cjs|lua)$/.test(f));

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** A file's anchors: its headings' (as GitHub makes them) and its explicit `<a id="...">`. */
function anchorsOf(file: string): Set<string> {
  const text = readFileSync(join(ROOT, file), 'utf8').replace(/^```[\s\S]*?^```$/gm, '');
  return new Set([
    ...[...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1]!)),
    ...[...text.matchAll(/<a id="([^"]+)">/g)].map((m) => m[1]!),
  ]);
}

/** The comments of a source file (Lua's `--`, JavaScript's and TypeScript's `//` and `/* … *\/`). */
function commentsOf(file: string): string {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const pattern = file.endsWith('.lua') ? /--\[\[[\s\S]*?\]\]|--[^\n]*/g : /\/\*[\s\S]*?\*\/|\/\/[^\n]*/g;
  return [...text.matchAll(pattern)].map((m) => m[0]).join('\n');
}

describe('links and file names in the docs', () => {
  it.each(MARKDOWN)('%s: every relative link resolves', (file) => {
    const text = readFileSync(join(ROOT, file), 'utf8').replace(/^```[\s\S]*?^```$/gm, '');
    const broken: string[] = [];
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target!)) continue;
      const [path, anchor] = target!.split('#') as [string, string | undefined];
      const linked = path === '' ? file : relative(ROOT, join(ROOT, dirname(file), path));
      if (!existsSync(join(ROOT, linked))) broken.push(`${target}: no file ${linked}`);
      else if (anchor !== undefined && linked.endsWith('.md') && !anchorsOf(linked).has(anchor))
        broken.push(`${target}: no heading #${anchor} in ${linked}`);
    }
    expect(broken).toEqual([]);
  });

  it('every markdown file named in a comment or a doc is in the repository', () => {
    const missing: string[] = [];
    for (const file of [...SOURCES, ...MARKDOWN]) {
      const text = file.endsWith('.md') ? readFileSync(join(ROOT, file), 'utf8') : commentsOf(file);
      for (const [name] of text.matchAll(/[\w./-]*\b[\w-]+\.md\b/g)) {
        const path = name.replace(/^\.\//, '');
        const known = path.includes('/')
          ? existsSync(join(ROOT, path)) || existsSync(join(ROOT, dirname(file), path))
          : MARKDOWN_NAMES.has(path);
        if (!known) missing.push(`${file}: ${name}`);
      }
    }
    expect(missing).toEqual([]);
  });
});
