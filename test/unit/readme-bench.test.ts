/**
 * The README's benchmark summary quotes bench/RESULTS.md and nothing else:
 * the run it names (date and commit) is the one RESULTS.md holds, and every
 * number in its table is one RESULTS.md prints. A new RESULTS.md fails this
 * until the summary is brought up to date.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const RESULTS = readFileSync(new URL('../../bench/RESULTS.md', import.meta.url), 'utf8');

/** The README's "## Benchmarks" section, up to the next section. */
function section(): string {
  const m = /^## Benchmarks\n([\s\S]*?)(?=^## )/m.exec(README);
  expect(m, 'README has a Benchmarks section').not.toBeNull();
  return m![1]!;
}

/** Numbers as written, thousands separators dropped: "179,132" and "179132" are one number. */
function numbersIn(text: string): Set<string> {
  return new Set([...text.matchAll(/\d[\d,]*(?:\.\d+)?/g)].map((m) => m[0].replace(/,(?=\d{3})/g, '')));
}

describe("the README's benchmark summary", () => {
  it('names the run RESULTS.md holds', () => {
    const m = /the run of (\d{4}-\d{2}-\d{2}) at commit\s+([0-9a-f]{7,40})/.exec(section());
    expect(m, 'the summary says "the run of <date> at commit <hash>"').not.toBeNull();
    expect(RESULTS).toMatch(new RegExp(`^- Date: ${m![1]!}T`, 'm'));
    expect(RESULTS).toContain(`(commit ${m![2]!})`);
  });

  it('quotes only numbers that RESULTS.md prints', () => {
    const table = section()
      .split('\n')
      .filter((line) => line.startsWith('| ') && !line.startsWith('| ---'))
      .slice(1)
      .map((line) => line.split('|').slice(2).join('|'))
      .join('\n');
    const printed = numbersIn(RESULTS);
    expect([...numbersIn(table)].filter((n) => !printed.has(n))).toEqual([]);
  });
});
