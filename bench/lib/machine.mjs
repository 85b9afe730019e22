// What the run was measured on: CPUs, RAM, Node, Redis and peer versions, load.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism, loadavg, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

function cpuModel() {
  try {
    const line = readFileSync('/proc/cpuinfo', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('model name'));
    return line ? line.split(':')[1].trim() : 'unknown';
  } catch {
    return 'unknown';
  }
}

function nproc() {
  try {
    return Number(execFileSync('nproc', { encoding: 'utf8' }).trim());
  } catch {
    return availableParallelism();
  }
}

function redisVersion() {
  try {
    return /v=([\d.]+)/.exec(execFileSync('redis-server', ['--version'], { encoding: 'utf8' }))?.[1] ?? 'unknown';
  } catch {
    return 'not installed';
  }
}

/** Version of an installed package, read from node_modules/<name>/package.json. */
export function packageVersion(name) {
  try {
    return JSON.parse(readFileSync(`${root}/node_modules/${name}/package.json`, 'utf8')).version;
  } catch {
    return 'not installed';
  }
}

function gitCommit() {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}

export function loadAverage() {
  return loadavg()
    .map((x) => x.toFixed(2))
    .join(', ');
}

export function machineInfo() {
  return {
    nproc: nproc(),
    cpu: cpuModel(),
    ramGiB: (totalmem() / 2 ** 30).toFixed(1),
    node: process.version,
    redis: redisVersion(),
    peers: Object.fromEntries(['piscina', 'workerpool', 'bullmq', 'ioredis'].map((p) => [p, packageVersion(p)])),
    prefork: `${JSON.parse(readFileSync(`${root}/package.json`, 'utf8')).version} (commit ${gitCommit()})`,
  };
}
