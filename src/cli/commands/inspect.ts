import type { Command } from 'commander';
import { brokerOption, namespaceOption } from '../broker-flags.js';
import type { BrokerAdmin, BrokerMembership, BrokerPauses, BrokerRevokes } from '../../broker/types.js';
import type { JobView } from '../../cluster/job-view.js';
import type { PoolStats } from '../../pool/stats.js';
import { withBroker } from '../connect.js';
import { askNodes, failure, type NodeAnswer, type NodeAsker } from '../control-request.js';
import { argsJson, argsText, fromBase64, isoTime, listedJobJson } from '../job-format.js';
import * as parse from '../parsers.js';
import { printJson, printTable } from '../print.js';
import { queueOverview, queuesOf } from '../queue-overview.js';
import { UsageError } from '../usage-error.js';
import { timeoutOption } from './control.js';

interface InspectFlags {
  broker?: string;
  namespace?: string;
  node?: string;
  queue?: string;
  limit: number;
  timeout: number;
  json?: boolean;
}

/** The broker roles inspect uses: node listings and control requests, queue counts and pages, revokes, pauses, the leader. */
type InspectBroker = NodeAsker &
  BrokerAdmin &
  Pick<BrokerRevokes, 'listRevoked'> &
  Pick<BrokerPauses, 'listPaused'> &
  Pick<BrokerMembership, 'leader'>;

type Subject = (broker: InspectBroker, flags: InspectFlags) => Promise<void>;

/** What `prefork inspect` shows, one function per subject (the first is the default). */
const SUBJECTS = new Map<string, Subject>([
  ['nodes', inspectNodes],
  ['queues', inspectQueues],
  ['stats', inspectStats],
  ['active', (b, f) => inspectJobs(b, f, 'active')],
  ['reserved', (b, f) => inspectJobs(b, f, 'reserved')],
  ['scheduled', inspectScheduled],
  ['registered', inspectRegistered],
  ['revoked', inspectRevoked],
]);

const NAMES = [...SUBJECTS.keys()];

export function registerInspect(program: Command): void {
  program
    .command('inspect')
    .description(
      'show the nodes, the queues, pool stats, the jobs running, reserved or scheduled, the tasks each node registers, or the revoked job ids',
    )
    .argument(
      '[what]',
      NAMES.join(', '),
      (v: string) => {
        if (!SUBJECTS.has(v)) throw new UsageError(`inspect: argument '${v}' is invalid. expected ${NAMES.join(', ')}`);
        return v;
      },
      'nodes',
    )
    .addOption(brokerOption())
    .addOption(namespaceOption())
    .option('--node <name>', 'stats, active, reserved, registered: only this node (its name or id)', parse.nodeName)
    .option('-q, --queue <name>', 'scheduled: only this queue', parse.queueName)
    .option('--limit <n>', 'scheduled: at most this many per queue (the soonest due)', parse.positiveInt, 50)
    .addOption(timeoutOption('stats, active, reserved, registered: how long to wait for the nodes to answer'))
    .option('--json', 'print JSON')
    .action(async (what: string, flags: InspectFlags) => {
      const subject = SUBJECTS.get(what) as Subject;
      await withBroker(flags, (b) => subject(b, flags));
    });
}

/** The live nodes; the one holding the leader lease is marked. */
async function inspectNodes(b: InspectBroker, flags: InspectFlags): Promise<void> {
  const [nodes, leader] = await Promise.all([b.listNodes(), b.leader()]);
  if (flags.json) printJson(nodes.map((n) => ({ ...n, leader: n.id === leader?.nodeId })));
  else
    printTable(
      ['NODE', 'HOST', 'PID', 'QUEUES', 'CONCURRENCY', 'STARTED', 'LEADER'],
      nodes.map((n) => [
        n.id,
        n.host,
        n.pid,
        n.queues.join(','),
        n.concurrency,
        isoTime(n.startedAt),
        n.id === leader?.nodeId ? `yes (token ${leader.token})` : '',
      ]),
    );
}

/** The revoked job ids the cluster remembers (read from the broker, not asked of the nodes). */
async function inspectRevoked(b: InspectBroker, flags: InspectFlags): Promise<void> {
  const revoked = await b.listRevoked();
  if (flags.json) printJson(revoked);
  else
    printTable(
      ['ID', 'REVOKED', 'REMEMBERED UNTIL'],
      revoked.map((r) => [r.id, isoTime(r.revokedAt), isoTime(r.expiresAt)]),
    );
}

async function inspectQueues(b: InspectBroker, flags: InspectFlags): Promise<void> {
  const rows = await queueOverview(b);
  if (flags.json) printJson(rows);
  else
    printTable(
      ['QUEUE', 'WAITING', 'RESERVED', 'DELAYED', 'DEAD', 'PAUSED'],
      rows.map((c) => [
        c.queue,
        c.waiting,
        c.reserved,
        c.delayed,
        c.dead,
        c.paused ? 'all nodes' : c.pausedOn.length > 0 ? c.pausedOn.join(',') : '-',
      ]),
    );
}

/** A node that did not answer makes the command exit 1 (its row says why). */
function exitOnFailure(answers: readonly NodeAnswer[]): void {
  if (answers.some((a) => a.reply?.ok !== true)) process.exitCode = 1;
}

/** Each node answers a 'stats' control request with its Worker stats (pool, consumer counts). */
async function inspectStats(broker: NodeAsker, flags: InspectFlags): Promise<void> {
  const answers = await askNodes(broker, 'stats', [], flags.node, flags.timeout);
  if (flags.json) {
    printJson(
      answers.map(({ node: n, reply }) => ({
        node: n.name,
        nodeId: n.id,
        stats: reply?.ok ? reply.value : null,
        ...(reply?.ok ? {} : { error: failure(reply, flags.timeout) }),
      })),
    );
  } else {
    printTable(
      ['NODE', 'PROCESSES', 'BUSY', 'RESERVED', 'DONE', 'FAILED', 'LOST', 'RESTARTS', 'AUTOSCALE'],
      answers.map(({ node: n, reply }) => {
        if (!reply?.ok) return [n.name, failure(reply, flags.timeout)];
        const pool = (reply.value as { pool: PoolStats }).pool;
        const live = pool.processes.filter((p) => p.state !== 'exited');
        return [
          n.name,
          live.length,
          live.filter((p) => p.state === 'busy').length,
          pool.reserved,
          pool.totals.done,
          pool.totals.failed,
          pool.totals.lost,
          pool.totals.restarts,
          pool.autoscale ? `${pool.autoscale.max},${pool.autoscale.min}` : '-',
        ];
      }),
    );
  }
  exitOnFailure(answers);
}

/** A node's jobs from its reply (an array of JobView); anything else is no jobs. */
function jobsOf(reply: NodeAnswer['reply']): JobView[] {
  return reply?.ok === true && Array.isArray(reply.value) ? (reply.value as JobView[]) : [];
}

/**
 * active: the jobs running in each node's children; reserved: fetched and
 * not started (in a node's buffer or a child's pipe). Each node answers a
 * control request with its pool's jobs; the arguments come as msgpack bytes
 * and are decoded here.
 */
async function inspectJobs(broker: NodeAsker, flags: InspectFlags, which: 'active' | 'reserved'): Promise<void> {
  const answers = await askNodes(broker, which, [], flags.node, flags.timeout);
  const now = Date.now();
  if (flags.json) {
    printJson(
      answers.map(({ node: n, reply }) => ({
        node: n.name,
        nodeId: n.id,
        jobs: jobsOf(reply).map(({ payload, ...job }) => ({
          ...job,
          ...(job.startedAt === undefined ? {} : { runtime: now - job.startedAt }),
          ...argsJson({ payload: fromBase64(payload), payloadBytes: job.payloadBytes }),
        })),
        ...(reply?.ok ? {} : { error: failure(reply, flags.timeout) }),
      })),
    );
  } else {
    const rows: (string | number)[][] = [];
    for (const { node: n, reply } of answers) {
      if (!reply?.ok) {
        rows.push([n.name, failure(reply, flags.timeout)]);
        continue;
      }
      for (const job of jobsOf(reply)) {
        const args = argsText({ payload: fromBase64(job.payload), payloadBytes: job.payloadBytes });
        if (which === 'active')
          rows.push([
            n.name,
            job.pid ?? '-',
            job.id,
            job.task,
            job.queue ?? '-',
            args,
            job.startedAt === undefined ? '-' : `${((now - job.startedAt) / 1000).toFixed(1)} s`,
          ]);
        else
          rows.push([
            n.name,
            job.pid === undefined ? 'buffer' : `pipe ${job.pid}`,
            job.id,
            job.task,
            job.queue ?? '-',
            args,
          ]);
      }
    }
    printTable(
      which === 'active'
        ? ['NODE', 'PID', 'ID', 'TASK', 'QUEUE', 'ARGS', 'RUNTIME']
        : ['NODE', 'WHERE', 'ID', 'TASK', 'QUEUE', 'ARGS'],
      rows,
    );
  }
  exitOnFailure(answers);
}

/** The tasks each node's module defines, with the options it declares for them. */
async function inspectRegistered(broker: NodeAsker, flags: InspectFlags): Promise<void> {
  const answers = await askNodes(broker, 'registered', [], flags.node, flags.timeout);
  const tasksOf = (reply: NodeAnswer['reply']): { name: string; options: Record<string, unknown> }[] =>
    reply?.ok === true && Array.isArray(reply.value)
      ? (reply.value as { name: string; options: Record<string, unknown> }[])
      : [];
  if (flags.json) {
    printJson(
      answers.map(({ node: n, reply }) => ({
        node: n.name,
        nodeId: n.id,
        tasks: tasksOf(reply),
        ...(reply?.ok ? {} : { error: failure(reply, flags.timeout) }),
      })),
    );
  } else {
    const rows: (string | number)[][] = [];
    for (const { node: n, reply } of answers) {
      if (!reply?.ok) rows.push([n.name, failure(reply, flags.timeout)]);
      for (const t of tasksOf(reply))
        rows.push([n.name, t.name, Object.keys(t.options).length === 0 ? '-' : JSON.stringify(t.options)]);
    }
    printTable(['NODE', 'TASK', 'OPTIONS'], rows);
  }
  exitOnFailure(answers);
}

/**
 * Delayed jobs (ETA, countdown) and retries waiting for their backoff, the
 * soonest due first: read from each queue's delayed set, `--limit` per queue
 * (one bounded read each); `prefork jobs <queue> --state delayed` pages on.
 */
async function inspectScheduled(b: InspectBroker, flags: InspectFlags): Promise<void> {
  const queues = await queuesOf(b, flags.queue);
  const pages = [];
  for (const queue of queues) pages.push({ queue, ...(await b.listJobs(queue, 'delayed', flags.limit)) });
  if (flags.json) {
    printJson(pages.map((p) => ({ queue: p.queue, jobs: p.jobs.map(listedJobJson), next: p.next ?? null })));
    return;
  }
  printTable(
    ['QUEUE', 'ID', 'TASK', 'DUE', 'KIND', 'ARGS'],
    pages.flatMap((p) =>
      p.jobs.map((l) => [
        p.queue,
        l.job.id,
        l.job.task,
        isoTime(l.dueAt),
        l.job.attempt > 0 ? `retry ${l.job.attempt}` : 'delayed',
        argsText({ payload: l.job.payload }),
      ]),
    ),
  );
  for (const p of pages)
    if (p.next !== undefined)
      process.stdout.write(`more in ${p.queue}: prefork jobs ${p.queue} --state delayed --cursor ${p.next}\n`);
}
