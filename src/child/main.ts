/**
 * Entry point of a child process (the worker loop). The parent spawns
 * `node dist/child/main.js` with stdin = inq and stdout = outq; the config
 * comes in an environment variable. The parent never runs user code: this does.
 */
import { fileURLToPath, pathToFileURL } from 'node:url';
import { isAbsolute, resolve } from 'node:path';
import { FrameTooLargeError, OptionError, messageOf } from '../errors.js';
import { isTaskRegistry } from '../tasks.js';
import { deserializeError, serializeError } from '../protocol/error-codec.js';
import { CHILD_CONFIG_ENV, MessageType, type ChildConfig, type ParentMessage } from '../protocol/messages.js';
import { START_RECORD_FD, StartRecordWriter } from '../protocol/start-record.js';
import { CLAIM_FD, ClaimTaker } from '../protocol/claim-pipe.js';
import { ParentChannel } from './channel.js';
import { JobRunner } from './job-runner.js';
import { explainLoadError } from './load-error.js';
import { Watchdog } from './watchdog.js';

const EXIT_PARENT_GONE = 70;
const EXIT_INIT_FAILED = 78;
const EXIT_PROTOCOL = 76;

const config = JSON.parse(process.env[CHILD_CONFIG_ENV] ?? 'null') as ChildConfig | null;
if (config === null) {
  process.stderr.write(`prefork child: missing ${CHILD_CONFIG_ENV}; this file is started by a prefork Pool\n`);
  process.exit(EXIT_INIT_FAILED);
}

// The parent alone decides (warm or cold shutdown, quiet, reload, resize) and tells
// a child over the pipe, so a child must not die or stop of a signal mid-job. It
// runs in its own session, out of reach of one sent to the node's process group
// (Ctrl-C, `timeout`, a terminal's hangup); systemd signals every process of its
// cgroup, and anyone may signal its pid. The parent kills with SIGKILL.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGQUIT', 'SIGHUP', 'SIGTSTP', 'SIGTTIN', 'SIGTTOU'] as const)
  process.on(signal, () => undefined);

let runner: JobRunner | undefined;
const early: ParentMessage[] = [];
const channel = new ParentChannel(
  config.maxFrameSize,
  onMessage,
  () => runner?.readOn(),
  () => process.exit(EXIT_PARENT_GONE),
  (err) => {
    process.stderr.write(`prefork child ${process.pid}: cannot go on reading inq: ${messageOf(err)}\n`);
    process.exit(EXIT_PROTOCOL);
  },
);
// Started beside the task module's import (its thread comes up even if a job already blocks this one), and
// after the channel: a Worker pipes its thread's stdout into process.stdout, by now pointed at stderr.
const parentPid = typeof config.parentPid === 'number' ? config.parentPid : process.ppid;
// The death signal is armed after the fork: a parent that died before that left this child orphaned already.
if (config.deathSignal === true && process.ppid !== parentPid) process.exit(EXIT_PARENT_GONE);
const watchdog = new Watchdog(parentPid, config.deathSignal === true);

function onMessage(msg: ParentMessage): void {
  if (runner === undefined) {
    early.push(msg);
    return;
  }
  switch (msg[0]) {
    case MessageType.JOB:
      runner.push(msg);
      return;
    case MessageType.SOFT_TIMEOUT:
      runner.softTimeout(msg[1]);
      return;
    case MessageType.SHUTDOWN:
      runner.shutdown();
      return;
    case MessageType.WITHDRAW:
      runner.withdraw();
      return;
    case MessageType.ABORT:
      runner.abort(msg[1], deserializeError(msg[2]));
      return;
    default:
      process.stderr.write(`prefork child ${process.pid}: unknown message type ${String((msg as unknown[])[0])}\n`);
      process.exit(EXIT_PROTOCOL);
  }
}

function exitWhenFlushed(): void {
  channel.flushAndWait(() => process.exit(0));
}

async function load({ app, maxFrameSize, reportMemory, memoryLimit, startRecord, claims }: ChildConfig): Promise<void> {
  const url = pathToFileURL(isAbsolute(app) ? app : resolve(app)).href;
  let mod: { default?: unknown };
  try {
    mod = (await import(url)) as { default?: unknown };
  } catch (err) {
    let explained = err;
    try {
      explained = explainLoadError(err, fileURLToPath(url));
    } catch {
      // What the module threw cannot be read (a Proxy's traps throw): serializeError says so.
    }
    return initFailed(explained);
  }
  // A CommonJS module compiled from `export default` (exports.default = ...) imports as { default: { default } }.
  const registry = isTaskRegistry(mod.default) ? mod.default : (mod.default as { default?: unknown } | null)?.default;
  if (!isTaskRegistry(registry)) {
    return initFailed(new OptionError('app', app, 'a task module whose default export is defineTasks({...})'));
  }
  // Options go as [name, options] pairs: a task name is data, never an object key. Encoded before any job can run.
  let up: Buffer;
  try {
    up = channel.encode([MessageType.WORKER_UP, process.pid, [...registry.tasks.keys()], [...registry.options]]);
  } catch (err) {
    // Thrown out of load(), it would end the child as an unhandled rejection: the pool would respawn it, told nothing.
    const size = err instanceof FrameTooLargeError ? `${err.size} bytes` : messageOf(err);
    return initFailed(new OptionError('maxFrameSize', maxFrameSize, `room for the list of tasks (${size})`));
  }
  const record = startRecord === true ? new StartRecordWriter(START_RECORD_FD) : undefined;
  const claimTaker = claims === true ? new ClaimTaker(CLAIM_FD) : undefined;
  const limit = typeof memoryLimit === 'number' ? memoryLimit : undefined;
  runner = new JobRunner(registry.tasks, channel, reportMemory, watchdog, exitWhenFlushed, record, claimTaker, limit);
  channel.sendFrame(up);
  channel.flush();
  channel.replay(early.splice(0));
}

function initFailed(err: unknown): void {
  const wire = serializeError(err);
  try {
    channel.send([MessageType.INIT_ERROR, wire]);
  } catch {
    // Too big for a frame (a small maxFrameSize, a huge stack): its name and message, and all of it on stderr.
    process.stderr.write(`prefork child ${process.pid}: cannot load the task module: ${wire.name}: ${wire.message}\n`);
    try {
      channel.send([MessageType.INIT_ERROR, { name: wire.name, message: wire.message }]);
    } catch {
      // Not even that fits: the exit code and the line above say it.
    }
  }
  channel.flushAndWait(() => process.exit(EXIT_INIT_FAILED));
}

void load(config);
