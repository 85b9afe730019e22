// Runs one measured workload in a fresh Node process: the scenario file gets
// its knobs as JSON in $BENCH_PARAMS and prints one line `RESULT {json}`.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const benchDir = fileURLToPath(new URL('..', import.meta.url));

/** Spawns `node bench/<file> ` and resolves with the parsed RESULT (or { error }). */
export function runScenario(file, params, { timeoutMs = 180_000, nodeArgs = [] } = {}) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...nodeArgs, `${benchDir}/${file}`], {
      env: { ...process.env, BENCH_PARAMS: JSON.stringify(params) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      const line = out
        .split('\n')
        .reverse()
        .find((l) => l.startsWith('RESULT '));
      if (code === 0 && line) return resolve(JSON.parse(line.slice(7)));
      const why = signal === 'SIGKILL' ? `timed out after ${timeoutMs} ms` : `exit ${code ?? signal}`;
      const lines = (err || out).trim().split('\n');
      const thrown = lines.find((l) => /Error|error:/.test(l)); // the message, which a long stack would push out of the tail
      resolve({
        error: `${file} ${JSON.stringify(params)}: ${why}: ${thrown ? `${thrown.trim()} … ` : ''}${lines.slice(-5).join(' | ')}`,
      });
    });
  });
}

/** In a scenario: its knobs. */
export function params() {
  return JSON.parse(process.env.BENCH_PARAMS ?? '{}');
}

/** In a scenario: report and exit (children and sockets must not keep it alive). */
export function report(result) {
  process.stdout.write(`RESULT ${JSON.stringify(result)}\n`, () => process.exit(0));
}
