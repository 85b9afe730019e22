import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { ChainableCommander, Pipeline, Redis } from 'ioredis';
import { InvalidStateError } from '../../errors.js';
import { GROUP } from './keys.js';

/**
 * The Lua scripts, one atomic operation per file (`lua/<verbNoun>-<keys>.lua`,
 * `n` = a variable number of keys), each with the shared prelude prepended
 * (and before it `GROUP`, the consumer group's name from keys.ts),
 * registered on a connection with ioredis `defineCommand` (EVALSHA, falling
 * back to EVAL when Redis lost its script cache, e.g. after a restart).
 */
const SCRIPTS = {
  enqueueDelayed: 'enqueueDelayed-3.lua',
  enqueueJobs: 'enqueueJobs-2.lua',
  enqueueOnce: 'enqueueOnce-n.lua',
  enqueueWorkflow: 'enqueueWorkflow-n.lua',
  releaseUnique: 'releaseUnique-2.lua',
  fetchJobs: 'fetchJobs-n.lua',
  createGroups: 'createGroups-n.lua',
  registerNode: 'registerNode-3.lua',
  adoptEntries: 'adoptEntries-n.lua',
  updateNode: 'updateNode-2.lua',
  heartbeat: 'heartbeat-n.lua',
  sendControl: 'sendControl-2.lua',
  takeControl: 'takeControl-1.lua',
  claimRecovery: 'claimRecovery-3.lua',
  recoverEntries: 'recoverEntries-n.lua',
  finishRecovery: 'finishRecovery-n.lua',
  purgeQueue: 'purgeQueue-n.lua',
  changeDead: 'changeDead-3.lua',
  findDead: 'findDead-1.lua',
  countJobs: 'countJobs-4.lua',
  revokeJobs: 'revokeJobs-1.lua',
  swapResult: 'swapResult-n.lua',
  storeResults: 'storeResults-n.lua',
  listWaiting: 'listWaiting-2.lua',
  listDelayed: 'listDelayed-1.lua',
  removeJob: 'removeJob-n.lua',
  pauseQueue: 'pauseQueue-2.lua',
  resumeQueue: 'resumeQueue-2.lua',
  acquireSlots: 'acquireSlots-n.lua',
  setRateLimit: 'setRateLimit-n.lua',
  publishSchedule: 'publishSchedule-n.lua',
  claimTicks: 'claimTicks-n.lua',
  dropUnusedSchedule: 'dropUnusedSchedule-3.lua',
} as const;

export type ScriptName = keyof typeof SCRIPTS;

/** Scripts that also get lib/workflow.lua after the prelude (they start a workflow's steps, or read a job's place in one). */
const WITH_WORKFLOWS: ReadonlySet<ScriptName> = new Set([
  'enqueueWorkflow',
  'fetchJobs',
  'removeJob',
  'recoverEntries',
  'changeDead',
  'findDead',
  'purgeQueue',
]);
type Arg = string | number | Buffer;

let sources: Map<ScriptName, { lua: string; numberOfKeys: number | undefined }> | undefined;

/** The key count a script's file name declares (`-<n>.lua`), or undefined for a variable count (`-n.lua`). */
function keyCount(file: string): number | undefined {
  const keys = /-(\d+|n)\.lua$/.exec(file)?.[1];
  return keys === undefined || keys === 'n' ? undefined : Number(keys);
}

/** Every script's fixed key count (undefined: variable), read once: callScript is on the hot path. */
const KEY_COUNT = new Map(Object.values(SCRIPTS).map((file) => [file, keyCount(file)]));

function load(): Map<ScriptName, { lua: string; numberOfKeys: number | undefined }> {
  if (sources) return sources;
  const dir = new URL('./lua/', import.meta.url);
  const prelude = `local GROUP = ${JSON.stringify(GROUP)}\n${readFileSync(new URL('lib/prelude.lua', dir), 'utf8')}`;
  const workflow = readFileSync(new URL('lib/workflow.lua', dir), 'utf8');
  sources = new Map();
  for (const [name, file] of Object.entries(SCRIPTS) as [ScriptName, string][]) {
    let body = readFileSync(new URL(file, dir), 'utf8');
    if (WITH_WORKFLOWS.has(name)) {
      const shebang = /^#!lua[^\n]*\n/.exec(body)?.[0] ?? '';
      body = `${shebang}${workflow}\n${body.slice(shebang.length)}`;
    }
    // Redis 7 script flags (`#!lua flags=allow-oom`) count only on the script's first line: ahead of the prelude.
    const shebang = /^#!lua[^\n]*\n/.exec(body)?.[0] ?? '';
    sources.set(name, { lua: `${shebang}${prelude}\n${body.slice(shebang.length)}`, numberOfKeys: keyCount(file) });
  }
  return sources;
}

/**
 * Defines the scripts on a connection. They are then kept off its list of
 * scripts (ioredis `scriptsSet`): every pipeline copies that list into
 * itself, and with these scripts on it a `pipeline()` cost about 14 µs and
 * 11 KB instead of 2 µs (the settle and enqueue paths make one per call).
 * callScript finds a pipeline's scripts on its connection instead.
 */
export function defineScripts(redis: Redis): void {
  const set = (redis as unknown as { scriptsSet: Record<string, unknown> }).scriptsSet;
  for (const [name, { lua, numberOfKeys }] of load()) {
    if (numberOfKeys === undefined) redis.defineCommand(name, { lua });
    else redis.defineCommand(name, { lua, numberOfKeys });
    delete set[name];
  }
}

let byText: Map<string, ScriptName> | undefined;

/**
 * The script a command's first argument is (EVAL: its source; EVALSHA: its
 * hash), or undefined: so an error names the script, not its 35 KB source.
 */
export function scriptNameOf(arg: unknown): ScriptName | undefined {
  if (typeof arg !== 'string' && !Buffer.isBuffer(arg)) return undefined;
  if (byText === undefined) {
    byText = new Map();
    for (const [name, { lua }] of load()) {
      byText.set(lua, name);
      byText.set(createHash('sha1').update(lua).digest('hex'), name);
    }
  }
  return byText.get(arg.toString());
}

/**
 * Calls a script on a connection or a pipeline. Replies come back as
 * Buffers (payloads are binary); numbers stay numbers. Scripts with a
 * variable key count get the count first.
 */
export function callScript(
  target: Redis,
  name: ScriptName,
  keys: readonly string[],
  args: readonly Arg[],
): Promise<unknown>;
export function callScript(
  target: ChainableCommander,
  name: ScriptName,
  keys: readonly string[],
  args: readonly Arg[],
): ChainableCommander;
export function callScript(
  target: Redis | ChainableCommander,
  name: ScriptName,
  keys: readonly string[],
  args: readonly Arg[],
): unknown {
  const fixed = KEY_COUNT.get(SCRIPTS[name]);
  // A pipeline has no copy of the scripts (defineScripts): its connection's run in it (as `this`).
  const owner = (target as Partial<Pipeline>).isPipeline === true ? (target as Pipeline).redis : target;
  const method = (owner as unknown as Record<string, (...a: Arg[]) => unknown>)[`${name}Buffer`];
  if (method === undefined) throw new InvalidStateError(`script ${name} is not defined on this connection`);
  const head: Arg[] = fixed === undefined ? [keys.length] : [];
  return method.call(target, ...head, ...keys, ...args);
}

/**
 * A time a script returned on Redis's clock (`at`; -1 = none) on this
 * machine's clock: now plus what Redis's clock (`brokerNow`, read by the same
 * script) says is left. A skewed local clock then neither spins nor delays,
 * and the time the reply took only makes it later, never early.
 */
export function onLocalClock(at: number, brokerNow: number): number | undefined {
  return at < 0 ? undefined : Date.now() + (at - brokerNow);
}

/** Redis TIME's reply (seconds, microseconds) as epoch ms on the server's clock, as the scripts' nowMs() reads it. */
export function serverMs(time: readonly (string | number)[]): number {
  return Number(time[0]) * 1000 + Math.floor(Number(time[1]) / 1000);
}
