import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The tests run the compiled package (children are spawned from dist/, the
 * fixtures import 'prefork'), so a dist/ older than src/ would test old code.
 * `npm test` builds first; a run of single files (`npx vitest run x.test.ts`)
 * does not, and stops here naming the first stale file.
 */
const root = fileURLToPath(new URL('../..', import.meta.url));

/** src/**\/*.ts → dist/**\/*.js and src/**\/*.lua → dist/**\/*.lua (what `npm run build` writes). */
function* sources(dir: string): Generator<{ src: string; out: string }> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* sources(path);
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts'))
      yield { src: path, out: outputOf(path).replace(/\.ts$/, '.js') };
    else if (entry.name.endsWith('.lua')) yield { src: path, out: outputOf(path) };
  }
}

function outputOf(src: string): string {
  return join(root, 'dist', relative(join(root, 'src'), src));
}

/** The first source file whose output is missing or older than it, as a message; undefined when dist/ is fresh. */
export function staleOutput(): string | undefined {
  for (const { src, out } of sources(join(root, 'src'))) {
    const name = relative(root, src);
    if (!existsSync(out)) return `${relative(root, out)} is missing (for ${name})`;
    if (statSync(out).mtimeMs < statSync(src).mtimeMs) return `${relative(root, out)} is older than ${name}`;
  }
  return undefined;
}

export default function setup(): void {
  const stale = staleOutput();
  if (stale !== undefined) throw new Error(`dist/ is stale: ${stale}. Run \`npm run build\` (npm test builds first).`);
}
