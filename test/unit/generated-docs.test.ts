/**
 * The generated docs are current: docs/api.md (from the TSDoc) and the flag
 * tables of docs/cli.md (from the CLI's definitions) are what `npm run docs`
 * writes from this checkout. A comment or a flag changed without running it
 * fails here, naming the file.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

describe('generated docs', () => {
  it('docs/api.md and the flag tables of docs/cli.md are what npm run docs writes', { timeout: 120_000 }, () => {
    const r = spawnSync(process.execPath, ['scripts/docs.mjs', '--check'], { cwd: ROOT, encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('');
    expect(r.status).toBe(0);
  });
});
