/**
 * A CommonJS project uses prefork: require('prefork') and require('prefork/task')
 * work (Node >= 20.19 loads the ES module), and a CommonJS task module runs,
 * also in the shape TypeScript compiles `export default` to.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
let project = '';

beforeAll(() => {
  project = mkdtempSync(join(tmpdir(), 'prefork-cjs-'));
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'cjs-app', private: true, type: 'commonjs' }));
  mkdirSync(join(project, 'node_modules'));
  symlinkSync(ROOT, join(project, 'node_modules', 'prefork'), 'dir');
  writeFileSync(
    join(project, 'tasks.js'),
    `const { defineTasks } = require('prefork/task');\nmodule.exports = defineTasks({ add: (a, b) => a + b });\n`,
  );
  // What tsc emits for \`export default defineTasks(...)\` with "module": "commonjs".
  writeFileSync(
    join(project, 'compiled-tasks.js'),
    `"use strict";\nObject.defineProperty(exports, "__esModule", { value: true });\nconst task_1 = require("prefork/task");\nexports.default = (0, task_1.defineTasks)({ mul: (a, b) => a * b });\n`,
  );
  writeFileSync(
    join(project, 'main.js'),
    `const path = require('node:path');
const { Pool, Client, defineTasks, PoolFailedError } = require('prefork');
(async () => {
  const kinds = [typeof Pool, typeof Client, typeof defineTasks, typeof PoolFailedError];
  const pool = new Pool({ app: path.join(__dirname, process.argv[2]), processes: 1 });
  await pool.start();
  const value = await pool.apply(process.argv[3], [6, 7]);
  await pool.close();
  process.stdout.write(JSON.stringify({ kinds, value }));
})().catch((err) => { process.stderr.write(String(err && err.stack)); process.exit(1); });
`,
  );
});

afterAll(() => {
  if (project) rmSync(project, { recursive: true, force: true });
});

function runMain(app: string, task: string): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['main.js', app, task], { cwd: project, encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('a CommonJS project', () => {
  it("require('prefork') gives the library, and a CommonJS task module runs in the pool", () => {
    const r = runMain('tasks.js', 'add');
    expect(r.stderr).not.toMatch(/ERR_REQUIRE_ESM|ERR_PACKAGE_PATH_NOT_EXPORTED/);
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ kinds: ['function', 'function', 'function', 'function'], value: 13 });
  });

  it('a task module compiled from TypeScript to CommonJS (exports.default) runs too', () => {
    const r = runMain('compiled-tasks.js', 'mul');
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ value: 42 });
  });
});
