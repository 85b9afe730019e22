/**
 * The typed API is checked by the compiler: test/types/typed-api.ts must
 * compile, including every `@ts-expect-error` (a bad call that starts to
 * compile fails it as an unused directive).
 */
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const TSC = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const PROJECT = fileURLToPath(new URL('../types/tsconfig.json', import.meta.url));

describe('the typed API', () => {
  it('a task module typed into Client, JobHandle and Pool: good calls compile, bad ones do not', () => {
    const r = spawnSync(process.execPath, [TSC, '-p', PROJECT], { encoding: 'utf8', timeout: 120_000 });
    expect(r.stdout + r.stderr).toBe('');
    expect(r.status).toBe(0);
  }, 120_000);
});
