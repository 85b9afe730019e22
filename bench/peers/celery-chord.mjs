// B10's Celery side, run from Node like every scenario: runs
// peers/celery_chord.py with Debian's python3 (python3-celery, python3-redis)
// and passes its RESULT line on. Without them it reports why, as an error.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const PYTHON = '/usr/bin/python3';
const script = fileURLToPath(new URL('./celery_chord.py', import.meta.url));
const r = spawnSync(PYTHON, [script], { env: process.env, encoding: 'utf8', timeout: 900_000 });
const line = (r.stdout ?? '')
  .split('\n')
  .reverse()
  .find((l) => l.startsWith('RESULT '));
if (r.status !== 0 || line === undefined) {
  process.stderr.write(`celery chord failed (exit ${r.status ?? r.signal}): ${(r.stderr ?? '').slice(-800)}\n`);
  process.exit(1);
}
process.stdout.write(`${line}\n`);
