/**
 * The README and the docs run as written: every js, ts and sh block in them
 * is a marked snippet, and this file runs each one in a fresh project against
 * the test setup's Redis — the quickstart with the real `npx prefork worker`
 * and `npx prefork enqueue --wait`. docs/api.md is generated from the TSDoc
 * and left out. What cannot run here is replaced by its
 * equivalent and said so: `npm install` links this checkout (no registry),
 * `redis-server` is the one the setup started, and `npm test` is this run.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { commandsOf, Project, readBlocks, ROOT, type Block } from '../helpers/readme.js';
import { emptyRedisDb } from '../helpers/worker.js';

const DB = 14;
/** The hand-written markdown files whose snippets run here. */
const DOCS = ['README.md', 'docs/guide.md', 'docs/cli.md', 'docs/failure-modes.md', 'docs/architecture.md'];
const blocks: (Block & { file: string })[] = DOCS.flatMap((file) =>
  readBlocks(join(ROOT, file)).map((b) => ({ ...b, file })),
);
const RUNNABLE = new Set(['js', 'ts', 'sh', 'cjs', 'mjs', 'bash', 'javascript', 'typescript']);
/** Every snippet this file runs; a snippet of the docs missing here, or here and not in the docs, fails. */
const RUN_HERE = [
  'quickstart/install.sh',
  'quickstart/redis.sh',
  'quickstart/tasks.mjs',
  'quickstart/worker.sh',
  'quickstart/enqueue.sh',
  'cli/commands.sh',
  'clone/commands.sh',
  'library/pool.mjs',
  'library/worker.mjs',
  'library/client.mjs',
  'workflow/flow-tasks.mjs',
  'workflow/flow.mjs',
  'guide/tasks.mjs',
  'guide/pool.mjs',
  'guide/worker.mjs',
  'guide/client.mjs',
  'guide/main.cjs',
  'typescript/tasks.ts',
  'typescript/enqueue.ts',
  'typescript/run.sh',
  'schedule/schedule.mjs',
  'schedule/worker.sh',
];

function snippet(name: string): Block {
  const found = blocks.filter((b) => b.snippet === name);
  expect(found, `snippet ${name}`).toHaveLength(1);
  return found[0]!;
}

function outputOf(name: string): string {
  const found = blocks.find((b) => b.output === name);
  expect(found, `output of ${name}`).toBeDefined();
  return found!.body;
}

/** Lines with their runs of blanks as one space: a table printed to fit its cells. */
function squeezed(text: string): string[] {
  return text.split('\n').map((l) => l.trim().replace(/\s+/g, ' '));
}

/** A file snippet goes to the file its first line names (`// tasks.mjs`), which must match the marker. */
function writeSnippet(project: Project, name: string): void {
  const block = snippet(name);
  const file = name.slice(name.indexOf('/') + 1);
  expect(block.body.split('\n')[0], `${name} names its file on its first line`).toMatch(
    new RegExp(`^// ${file.replace('.', '\\.')}\\b`),
  );
  project.write(file, block.body);
}

const projects: Project[] = [];
afterEach(() => {
  for (const p of projects.splice(0)) p.cleanup();
});

let brokerUrl = '';
beforeAll(async () => {
  brokerUrl = await emptyRedisDb(DB);
});

function project(): Project {
  const p = new Project({ PREFORK_BROKER_URL: brokerUrl });
  projects.push(p);
  return p;
}

/** `npm install <names>`, done without a registry (Project.install). */
function install(p: Project, command: string): void {
  const m = /^npm install(?: --save-dev)? ((?:[\w@/.-]+ ?)+)$/.exec(command);
  expect(m, `an install line: ${command}`).not.toBeNull();
  for (const name of m![1]!.trim().split(/\s+/)) p.install(name);
}

/**
 * SIGTERM to the worker's process group, as a terminal's job control or a
 * service manager sends it. npx itself dies of the signal; the worker node
 * under it stops warm: its last log line says so.
 */
async function stopWarm(worker: ReturnType<Project['start']>): Promise<void> {
  await worker.stop();
  await expect.poll(worker.output, { timeout: 60_000 }).toMatch(/"mode":"warm","msg":"worker stopping"/);
  await expect.poll(worker.output, { timeout: 60_000 }).toMatch(/"msg":"worker stopped"/);
}

describe('README and docs', { timeout: 240_000 }, () => {
  it('marks every runnable block as a snippet, and this file runs each of them', () => {
    const unmarked = blocks.filter((b) => RUNNABLE.has(b.info) && b.snippet === undefined);
    expect(unmarked.map((b) => `${b.file}:${b.line} (${b.info})`)).toEqual([]);
    const marked = blocks.filter((b) => b.snippet !== undefined).map((b) => b.snippet);
    expect(marked.sort()).toEqual([...RUN_HERE].sort());
  });

  it('quickstart: install, a task module, npx prefork worker, npx prefork enqueue --wait, then the CLI', async () => {
    const p = project();
    const [installLine, ...rest] = commandsOf(snippet('quickstart/install.sh').body);
    expect(rest).toEqual([]);
    install(p, installLine!);
    // The setup's redis-server stands in for this one ($PREFORK_BROKER_URL points there).
    expect(commandsOf(snippet('quickstart/redis.sh').body)).toEqual(['redis-server --daemonize yes']);
    writeSnippet(p, 'quickstart/tasks.mjs');

    const [workerLine] = commandsOf(snippet('quickstart/worker.sh').body);
    const worker = p.start(workerLine!);
    await expect.poll(worker.output, { timeout: 60_000 }).toMatch(/^tasks \(1\): add$/m);

    const [enqueueLine] = commandsOf(snippet('quickstart/enqueue.sh').body);
    const r = p.run(enqueueLine!);
    expect(r.code).toBe(0);
    // The lines that do not vary from run to run are as the README shows them.
    const shown = outputOf('quickstart/enqueue.sh').split('\n');
    const stable = shown.filter((l) => /^(task|queue|state|args|value|retries):/.test(l));
    expect(stable).toHaveLength(6);
    for (const line of stable) expect(r.stdout.split('\n')).toContain(line);
    // Every line printed is shown, in the same order (the varying ones with other values).
    const labels = (text: string): string[] => [...text.matchAll(/^(\w+): /gm)].map((m) => m[1]!);
    expect(labels(r.stdout)).toEqual(labels(shown.join('\n')));

    await expect.poll(worker.output).toMatch(/add\[[0-9a-f-]{36}\] succeeded in \d+ ms \(pid \d+\)/);

    // The CLI section's commands, against the same worker: each succeeds, and
    // `inspect queues` prints the table shown (the delayed job in it). npm may
    // warn on stderr about its own config; prefork writes no error there.
    const cli = commandsOf(snippet('cli/commands.sh').body).map((line) => ({ line, ...p.run(line) }));
    expect(cli.map(({ line, code }) => ({ line, code }))).toEqual(cli.map(({ line }) => ({ line, code: 0 })));
    for (const { line, stderr } of cli) expect(stderr, line).not.toMatch(/error/i);
    const printed = squeezed(cli.map((r) => r.stdout).join('\n'));
    for (const line of squeezed(outputOf('cli/commands.sh').trim())) expect(printed).toContain(line);
    expect(cli.find((r) => r.line.includes('control grow'))?.stdout).toMatch(/^-> .+: /m);
    await stopWarm(worker);
  });

  it('from a clone: npm start runs the demo (npm install and npm test are this very run)', () => {
    const lines = commandsOf(snippet('clone/commands.sh').body);
    expect(lines).toEqual(['npm install && npm start', 'npm test']);
    const scripts = (
      JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
    ).scripts;
    expect(Object.keys(scripts)).toEqual(expect.arrayContaining(['start', 'test', 'prepare']));
    const r = spawnSync('npm', ['start', '--silent'], { cwd: ROOT, encoding: 'utf8', timeout: 180_000 });
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/240\/240 settled/);
    expect(r.stdout).toMatch(/^next:$/m);
  });

  it("README: the Pool, a Worker and a Client in code, on the quickstart's task module", async () => {
    const p = project();
    p.install('prefork');
    writeSnippet(p, 'quickstart/tasks.mjs');
    for (const file of ['pool.mjs', 'worker.mjs', 'client.mjs']) writeSnippet(p, `library/${file}`);

    const pool = p.run('node pool.mjs');
    expect(pool.stderr).toBe('');
    expect(pool.code).toBe(0);
    const lines = pool.stdout.trim().split('\n');
    expect(lines[0]).toBe('5');
    expect(lines.slice(1).join(' ')).toMatch(/applied: 1,.*done: 1/);

    const worker = p.start('node worker.mjs');
    await expect.poll(worker.output, { timeout: 60_000 }).toContain('worker ready');
    const client = p.run('node client.mjs');
    expect(client.code).toBe(0);
    expect(client.stdout).toBe('5\n');
    expect(client.stderr).toBe('');
    expect(await worker.stop()).toBe(0);
  });

  it('README: a chain, a group and a chord on memory://, a Worker and a Client in one process', () => {
    const p = project();
    p.install('prefork');
    writeSnippet(p, 'workflow/flow-tasks.mjs');
    writeSnippet(p, 'workflow/flow.mjs');
    const r = p.run('node flow.mjs');
    expect(r.code).toBe(0);
    // The Worker logs (JSON lines) on stdout too; the program's own lines are the rest.
    expect(r.stdout.split('\n').filter((line) => line !== '' && !line.startsWith('{'))).toEqual([
      '13',
      '[ 2, 4 ]',
      '6',
    ]);
  });

  it('guide: the task module, the Pool, a Worker and a Client in code, and CommonJS', async () => {
    const p = project();
    p.install('prefork');
    for (const file of ['tasks.mjs', 'pool.mjs', 'worker.mjs', 'client.mjs', 'main.cjs'])
      writeSnippet(p, `guide/${file}`);

    const pool = p.run('node pool.mjs');
    expect(pool.stderr).toBe('');
    expect(pool.code).toBe(0);
    const lines = pool.stdout.trim().split('\n');
    expect(lines.slice(0, 3)).toEqual(['5', '75025', "{ month: '2024-05', rows: 3 }"]);
    expect(lines.slice(3).join(' ')).toMatch(/applied: 3,.*done: 3/);

    const worker = p.start('node worker.mjs');
    await expect.poll(worker.output, { timeout: 60_000 }).toContain('worker ready');
    const client = p.run('node client.mjs');
    expect(client.code).toBe(0);
    expect(client.stdout).toBe("5\n2 { month: '2024-06', rows: 3 }\n");
    expect(client.stderr).toBe('');
    const cjs = p.run('node main.cjs');
    expect(cjs.code).toBe(0);
    expect(cjs.stdout).toBe('42\n');
    expect(await worker.stop()).toBe(0);
  });

  it('typescript: a typed client that compiles (and its commented-out mistakes do not), a .ts task module with tsx', async () => {
    const p = project();
    p.install('prefork');
    writeSnippet(p, 'typescript/tasks.ts');
    writeSnippet(p, 'typescript/enqueue.ts');
    const [installLine, workerLine, enqueueLine, ...rest] = commandsOf(snippet('typescript/run.sh').body);
    expect(rest).toEqual([]);
    install(p, installLine!);

    p.write(
      'tsconfig.json',
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          types: ['node'],
          typeRoots: [join(ROOT, 'node_modules/@types')],
        },
        include: ['*.ts'],
      }),
    );
    const tsc = `"${process.execPath}" "${createRequire(import.meta.url).resolve('typescript/bin/tsc')}" -p .`;
    const clean = p.run(tsc);
    expect(clean.stdout + clean.stderr).toBe('');
    expect(clean.code).toBe(0);
    const source = snippet('typescript/enqueue.ts').body;
    const mistakes = source.split('\n').filter((l) => /^\/\/ client\.enqueue\(.*\/\/ error:/.test(l));
    expect(mistakes).toHaveLength(2);
    for (const mistake of mistakes) {
      p.write('enqueue.ts', source.replace(mistake, mistake.replace(/^\/\/ /, 'void ')));
      const r = p.run(tsc);
      expect(r.code, mistake).not.toBe(0);
      expect(r.stdout).toMatch(/enqueue\.ts\(\d+,\d+\): error TS/);
    }
    p.write('enqueue.ts', source);

    const worker = p.start(workerLine!);
    await expect.poll(worker.output, { timeout: 60_000 }).toMatch(/^tasks \(2\): add, greet$/m);
    const r = p.run(enqueueLine!);
    expect(r.stderr).not.toMatch(/error/i);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('5 hello, ada\n');
    await stopWarm(worker);
  });

  it("README: a schedule on the quickstart's worker: its every-second entry fires", async () => {
    const p = project();
    p.install('prefork');
    writeSnippet(p, 'quickstart/tasks.mjs');
    writeSnippet(p, 'schedule/schedule.mjs');
    const [workerLine] = commandsOf(snippet('schedule/worker.sh').body);
    const worker = p.start(workerLine!);
    await expect
      .poll(() => worker.output().match(/add\[[^\]]*\] succeeded/g)?.length ?? 0, { timeout: 60_000 })
      .toBeGreaterThanOrEqual(2);
    await stopWarm(worker);
  });
});
