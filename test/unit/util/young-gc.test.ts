import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const INDEX = fileURLToPath(new URL('../../../dist/index.js', import.meta.url));
const YOUNG_GC = fileURLToPath(new URL('../../../dist/util/young-gc.js', import.meta.url));

// In a process of its own: the new space it measures is that process's. Loading prefork grows it; after
// 6 s of no allocation (V8 looks at its last 5 s) one young collection lets V8 shrink it.
const SCRIPT = `
import { getHeapSpaceStatistics } from 'node:v8';
const newSpace = () => getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size;
await import(${JSON.stringify(INDEX)});
const { collectYoung } = await import(${JSON.stringify(YOUNG_GC)});
const grown = newSpace();
await new Promise((resolve) => setTimeout(resolve, 6_000));
const ran = collectYoung();
console.log(JSON.stringify({ grown, ran, after: newSpace(), gcGlobal: typeof globalThis.gc }));
`;

describe('collectYoung (the idle trim of a pool’s parent)', () => {
  it('lets V8 shrink the new space of an idle process, and leaves no gc global behind', () => {
    const r = spawnSync(process.execPath, ['--input-type=module', '--eval', SCRIPT], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    const out = JSON.parse(r.stdout) as { grown: number; ran: boolean; after: number; gcGlobal: string };
    expect(out.ran).toBe(true);
    expect(out.after).toBeLessThan(out.grown);
    expect(out.gcGlobal).toBe('undefined');
  });
});
