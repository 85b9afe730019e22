/**
 * docs/cli.md's command summary is the CLI's: it shows every command,
 * subcommand and flag `prefork` has (but --broker and --namespace, which
 * every command takes), and no command or flag it does not have. (The
 * flag tables under "Every flag" are written from the same definitions by
 * `npm run docs`; generated-docs.test.ts checks that they are current.)
 */
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../../dist/cli/program.js';

const CLI_MD = readFileSync(new URL('../../../docs/cli.md', import.meta.url), 'utf8');

/** The fenced block under "## Commands": one or more lines per top-level command. */
function summary(): string {
  const m = /^## Commands\n[\s\S]*?^```text\n([\s\S]*?)^```$/m.exec(CLI_MD);
  expect(m, 'docs/cli.md has a text block under "## Commands"').not.toBeNull();
  return m![1]!;
}

/** The summary's lines for one top-level command: from `prefork <name>` to the next `prefork `. */
function linesOf(name: string): string {
  const lines = summary().split('\n');
  const picked: string[] = [];
  let inside = false;
  for (const line of lines) {
    if (line.startsWith('prefork ')) inside = line.startsWith(`prefork ${name} `) || line === `prefork ${name}`;
    if (inside) picked.push(line);
  }
  return picked.join('\n');
}

/** Every long flag of a command and its subcommands (help and version are commander's own). */
function flagsOf(command: Command): string[] {
  const own = command.options.map((o) => o.long).filter((f): f is string => f !== undefined && f !== '--version');
  return [...own, ...command.commands.flatMap(flagsOf)];
}

/** Every option of a command and its subcommands. */
function optionsOf(command: Command): Command['options'] {
  return [...command.options, ...command.commands.flatMap(optionsOf)];
}

const program = buildProgram();

describe('docs/cli.md', () => {
  it.each(program.commands.map((c) => [c.name(), c] as const))(
    'prefork %s: its subcommands and flags',
    (name, command) => {
      const text = linesOf(name);
      expect(text, `docs/cli.md shows prefork ${name}`).not.toBe('');
      for (const sub of command.commands) expect(text, `prefork ${name} ${sub.name()}`).toContain(sub.name());
      const parsed = new Set(flagsOf(command));
      const shown = new Set(text.match(/--[a-z][a-z-]*/g) ?? []);
      // `--node-arg=--import=tsx` shows a node flag as the value of ours.
      shown.delete('--import');
      expect([...shown].filter((flag) => !parsed.has(flag))).toEqual([]);
      // And every flag it has, long or short, but the two every command takes (said once, under "Brokers").
      const shownShort = new Set(text.match(/(?<=^|[\s[|])-[a-zA-Z](?=[\s\]|])/gm) ?? []);
      const missing = optionsOf(command).filter(
        (o) =>
          o.long !== undefined &&
          !['--broker', '--namespace', '--version'].includes(o.long) &&
          !shown.has(o.long) &&
          !(o.short !== undefined && shownShort.has(o.short)),
      );
      expect(missing.map((o) => o.flags)).toEqual([]);
    },
  );

  it('shows no command the CLI does not have', () => {
    const names = new Set(program.commands.map((c) => c.name()));
    const shown = summary()
      .split('\n')
      .filter((l) => l.startsWith('prefork '))
      .map((l) => l.split(' ')[1]!);
    expect(shown.filter((n) => !names.has(n))).toEqual([]);
  });
});
