/**
 * The snippets of the README and the docs as data, and small projects to run
 * them in. A runnable block (js, ts, sh) is marked
 * `<!-- snippet: scenario/file -->` on the line before it; an expected output
 * is marked `<!-- output: ... -->`.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface Block {
  /** The fence's info string (js, ts, sh, text, ...). */
  info: string;
  body: string;
  /** 1-based line of the opening fence. */
  line: number;
  snippet?: string;
  output?: string;
}

/** Every fenced block of a markdown file, with the marker on the line before it, if any. */
export function readBlocks(file: string): Block[] {
  const lines = readFileSync(file, 'utf8').split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)\s*$/.exec(lines[i] ?? '');
    if (open === null) continue;
    const end = lines.indexOf('```', i + 1);
    if (end < 0) throw new Error(`${file}:${i + 1}: a fence that never closes`);
    const before = lines[i - 1] ?? '';
    const block: Block = { info: open[1] ?? '', body: lines.slice(i + 1, end).join('\n') + '\n', line: i + 1 };
    const snippet = /^<!-- snippet: (\S+) -->$/.exec(before);
    const output = /^<!-- output: (\S+) -->$/.exec(before);
    if (snippet !== null) block.snippet = snippet[1];
    if (output !== null) block.output = output[1];
    blocks.push(block);
    i = end;
  }
  return blocks;
}

/** The commands of a shell snippet: one per line, without comments. */
export function commandsOf(body: string): string[] {
  return body
    .split('\n')
    .map((line) => line.replace(/\s+#.*$/, '').trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}

/**
 * A fresh project directory (an ES module package). `install(name)` does
 * what `npm install <name>` does for this checkout's own package and its
 * dev dependencies, without a registry: a link in node_modules and its bin.
 */
export class Project {
  readonly dir = mkdtempSync(join(tmpdir(), 'prefork-readme-'));
  private readonly background: ChildProcess[] = [];

  constructor(readonly env: Record<string, string>) {
    writeFileSync(
      join(this.dir, 'package.json'),
      JSON.stringify({ name: 'readme-app', private: true, type: 'module' }),
    );
    mkdirSync(join(this.dir, 'node_modules', '.bin'), { recursive: true });
  }

  install(name: string): void {
    const source = name === 'prefork' ? ROOT : join(ROOT, 'node_modules', name);
    symlinkSync(source, join(this.dir, 'node_modules', name), 'dir');
    const pkg = JSON.parse(readFileSync(join(source, 'package.json'), 'utf8')) as {
      bin?: string | Record<string, string>;
    };
    const bins = typeof pkg.bin === 'string' ? { [name]: pkg.bin } : (pkg.bin ?? {});
    for (const [bin, target] of Object.entries(bins)) {
      const path = join(this.dir, 'node_modules', '.bin', bin);
      writeFileSync(path, `#!/bin/sh\nexec "${process.execPath}" "${join(source, target)}" "$@"\n`);
      chmodSync(path, 0o755);
    }
  }

  write(file: string, body: string): void {
    writeFileSync(join(this.dir, file), body);
  }

  /** Runs a command line through sh in the project, as a person would type it. */
  run(command: string): { code: number | null; stdout: string; stderr: string } {
    const r = spawnSync('sh', ['-c', command], {
      cwd: this.dir,
      env: this.environment(),
      encoding: 'utf8',
      timeout: 120_000,
    });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  }

  /** Starts a long-running command (a worker) in its own process group; `stop()` sends it SIGTERM. */
  start(command: string): { output: () => string; stop: () => Promise<number | string | null> } {
    // exec: the command itself leads the process group and its exit status is the one seen here.
    const proc = spawn('sh', ['-c', `exec ${command}`], {
      cwd: this.dir,
      env: this.environment(),
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.background.push(proc);
    let out = '';
    proc.stdout.on('data', (c: Buffer) => (out += c.toString()));
    proc.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const exited = new Promise<number | string | null>((resolve) =>
      proc.once('exit', (code, signal) => resolve(code ?? signal)),
    );
    return {
      output: () => out,
      stop: () => {
        process.kill(-proc.pid!, 'SIGTERM');
        return exited;
      },
    };
  }

  cleanup(): void {
    for (const proc of this.background) {
      try {
        if (proc.exitCode === null) process.kill(-proc.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    rmSync(this.dir, { recursive: true, force: true });
  }

  private environment(): NodeJS.ProcessEnv {
    const bin = join(this.dir, 'node_modules', '.bin');
    return {
      ...process.env,
      ...this.env,
      PATH: `${bin}:${process.env.PATH ?? ''}`,
      npm_config_update_notifier: 'false',
    };
  }
}
