import { Option, type Command } from 'commander';
import { brokerOption, namespaceOption } from '../broker-flags.js';
import type { BrokerPauses, ControlCommand, ControlReply } from '../../broker/types.js';
import { checkQueueName } from '../../job-option-checks.js';
import { integerRange, MAX_PROCESSES, parseAutoscale, parseInteger } from '../../util/units.js';
import { withBroker } from '../connect.js';
import { askNodes, failure, type NodeAnswer, type NodeAsker } from '../control-request.js';
import * as parse from '../parsers.js';
import { printJson } from '../print.js';
import { pauseOrResume } from './control-pause.js';
import { UsageError } from '../usage-error.js';
import { DEFAULT_RATE } from '../../broker/rate-setting.js';
import { parseRateLimitArgs, setRateLimit } from './rate-limit.js';

/** Default --timeout: above the default heartbeat interval (10 s), which bounds how late a node sees a request. */
export const DEFAULT_CONTROL_TIMEOUT_MS = 12_000;

/** `--timeout` for requests to the nodes; the help shows the default with its unit (12s), not a bare 12000. */
export function timeoutOption(description: string): Option {
  return new Option('--timeout <duration>', `${description} (e.g. 5s)`)
    .argParser(parse.timerDuration)
    .default(DEFAULT_CONTROL_TIMEOUT_MS, `${DEFAULT_CONTROL_TIMEOUT_MS / 1000}s`);
}

const USAGE =
  'ping | grow N | shrink N | autoscale MAX,MIN | pause QUEUE | resume QUEUE | rate-limit TASK RATE|off|default | shutdown';

interface ControlFlags {
  broker?: string;
  namespace?: string;
  node?: string;
  timeout: number;
  json?: boolean;
}

/** The command and its arguments, or a UsageError naming what is wrong. */
export function parseControl(
  command: string,
  rest: readonly string[],
): { command: ControlCommand; args: (string | number)[] } {
  const wrongArity = (n: number): UsageError =>
    new UsageError(
      `control ${command}: expected ${n === 0 ? 'no argument' : 'one argument'}, got ${rest.length === 0 ? 'none' : `'${rest.join(' ')}'`}`,
    );
  const noArgument = (): void => {
    if (rest.length !== 0) throw wrongArity(0);
  };
  const oneArgument = (): string => {
    const [arg] = rest;
    if (arg === undefined || rest.length !== 1) throw wrongArity(1);
    return arg;
  };
  switch (command) {
    case 'ping':
    case 'shutdown':
      noArgument();
      return { command, args: [] };
    case 'grow':
    case 'shrink': {
      const n = oneArgument();
      const count = parseInteger(n);
      if (count === undefined || count < 1 || count > MAX_PROCESSES)
        throw new UsageError(
          `control ${command}: argument '${n}' is invalid. expected ${integerRange(1, MAX_PROCESSES)}`,
        );
      return { command, args: [count] };
    }
    case 'autoscale': {
      const arg = oneArgument();
      const bounds = parseAutoscale(arg);
      if (bounds === undefined)
        throw new UsageError(`control autoscale: argument '${arg}' is invalid. expected ${parse.AUTOSCALE_ARGUMENT}`);
      return { command, args: bounds };
    }
    case 'pause':
    case 'resume': {
      const queue = oneArgument();
      checkQueueName('', queue, (_flag, _value, expected) => {
        throw new UsageError(`control ${command}: argument '${queue}' is invalid. expected ${expected}`);
      });
      return { command, args: [queue] };
    }
    case 'rate-limit':
      return { command, args: parseRateLimitArgs(rest) };
    default:
      throw new UsageError(`control: command '${command}' is invalid. expected ${USAGE}`);
  }
}

function summary(command: ControlCommand, value: unknown): string {
  const v = (value ?? {}) as Record<string, unknown>;
  const a = v.autoscale as { max: number; min: number } | undefined;
  // An autoscaling node's bounds after the change: grow may raise max, shrink stops at min.
  const bounds = a === undefined ? '' : `, autoscale ${a.max},${a.min}`;
  switch (command) {
    case 'ping':
      return `pong (pid ${String(v.pid)}, up ${Number(v.uptime).toFixed(1)} s)`;
    case 'grow':
      return `OK, ${String(v.processes)} processes (+${String(v.added)})${bounds}`;
    case 'shrink':
      return `OK, ${String(v.retired)} retired, ${String(v.processes)} processes${bounds}`;
    case 'autoscale':
      return `OK, autoscale ${a?.max},${a?.min} (${String(v.processes)} processes now)`;
    case 'pause':
    case 'resume': {
      const paused = (v.paused as string[] | undefined) ?? [];
      const here = `paused here: ${paused.length === 0 ? 'none' : paused.join(', ')}`;
      return v.consumed === false ? `OK, ${here} (it does not consume this queue)` : `OK, ${here}`;
    }
    case 'shutdown':
      return 'OK, stopping (warm)';
    case 'rate-limit':
      return v.rateLimit === DEFAULT_RATE
        ? `OK, ${String(v.task)} at its own rate limit again`
        : `OK, ${String(v.task)} at ${String(v.rateLimit)}`;
    default:
      return 'OK';
  }
}

/** The replies as `--json` prints them: a node that did not answer in time gets one saying so. */
export function answersJson(answers: readonly NodeAnswer[], timeoutMs: number): ControlReply[] {
  return answers.map(
    ({ node, reply }) => reply ?? { node: node.name, nodeId: node.id, ok: false, error: failure(undefined, timeoutMs) },
  );
}

/** One line for people per node. */
export function answerLines(command: ControlCommand, answers: readonly NodeAnswer[], timeoutMs: number): string[] {
  return answers.map(({ node, reply }) => {
    const who = `-> ${node.name} (${node.id})`;
    if (reply?.ok !== true) return `${who}: ${failure(reply, timeoutMs)}`;
    return `${who}: ${summary(command, reply.value)}`;
  });
}

/** One line per node; returns whether every node replied ok. */
export function printAnswers(
  command: ControlCommand,
  answers: readonly NodeAnswer[],
  json: boolean,
  timeoutMs: number,
): boolean {
  if (json) printJson(answersJson(answers, timeoutMs));
  else for (const line of answerLines(command, answers, timeoutMs)) process.stdout.write(`${line}\n`);
  return answers.every((a) => a.reply?.ok === true);
}

/**
 * Runs one parsed control command: pause and resume are remembered in the
 * broker first (`said` tells what was), the others only go to the nodes.
 * `prefork control` and the dashboard's buttons both come here.
 */
export async function runControl(
  broker: NodeAsker & BrokerPauses,
  { command, args }: { command: ControlCommand; args: (string | number)[] },
  node: string | undefined,
  timeoutMs: number,
): Promise<{ said?: string; answers: NodeAnswer[] }> {
  // A rate limit is written to the broker and printed by setRateLimit: `prefork control rate-limit` does it.
  if (command === 'rate-limit')
    throw new UsageError("control rate-limit: set it with 'prefork control rate-limit <task> <rate|off|default>'");
  if (command === 'pause' || command === 'resume')
    return pauseOrResume(broker, { command, queue: String(args[0]), node, timeoutMs });
  return { answers: await askNodes(broker, command, args, node, timeoutMs) };
}

export function registerControl(program: Command): void {
  program
    .command('control')
    .description(`send a command to the live worker nodes (${USAGE})`)
    .argument('<command>', USAGE)
    .argument(
      '[args...]',
      'N for grow and shrink, MAX,MIN for autoscale, a queue for pause and resume, TASK RATE|off|default for rate-limit',
    )
    .addOption(brokerOption())
    .addOption(namespaceOption())
    .option('--node <name>', 'only this node (its name, or its id from inspect nodes)', parse.nodeName)
    .addOption(timeoutOption('how long to wait for the replies'))
    .option('--json', 'print the replies as JSON')
    .action(async (name: string, rest: string[], flags: ControlFlags) => {
      const parsed = parseControl(name, rest);
      if (parsed.command === 'rate-limit') {
        if (flags.node !== undefined)
          throw new UsageError('control rate-limit: a rate limit is cluster-wide; --node is not accepted');
        const [task, rate] = parsed.args as [string, string];
        const ok = await withBroker(flags, (b) =>
          setRateLimit(b, task, rate, flags.timeout, flags.json === true, (answers) =>
            printAnswers('rate-limit', answers, flags.json === true, flags.timeout),
          ),
        );
        if (!ok) process.exitCode = 1;
        return;
      }
      const { said, answers } = await withBroker(flags, (b) => runControl(b, parsed, flags.node, flags.timeout));
      if (said !== undefined && flags.json !== true) process.stdout.write(`${said}\n`);
      if (!printAnswers(parsed.command, answers, flags.json === true, flags.timeout)) process.exitCode = 1;
    });
}
