import type { Command } from 'commander';
import type { BrokerAdmin } from '../../broker/types.js';
import type { PoolStats } from '../../pool/stats.js';
import { withBroker } from '../connect.js';
import { askNodes, type NodeAsker } from '../control-request.js';
import { timeoutOption } from './control.js';
import * as parse from '../parsers.js';
import { printJson, printTable } from '../print.js';
import { UsageError } from '../usage-error.js';

/** The queues a command acts on: the one named, else every queue the broker has seen. */
async function queuesOf(broker: BrokerAdmin, queue: string | undefined): Promise<string[]> {
  return queue !== undefined ? [queue] : broker.knownQueues();
}

export function registerAdmin(program: Command): void {
  program
    .command('purge')
    .description('drop every waiting and delayed job of a queue')
    .argument('<queue>', 'queue name', parse.queueName)
    .option('-b, --broker <url>', 'broker URL', parse.brokerUrl)
    .option('--json', 'print JSON')
    .action(async (queue: string, flags: { broker?: string; json?: boolean }) => {
      const n = await withBroker(flags.broker, (b) => b.purge(queue));
      if (flags.json) printJson({ queue, purged: n });
      else process.stdout.write(`purged ${n} job(s) from ${queue}\n`);
    });

  const dead = program.command('dead').description('the dead set: jobs that failed for good');
  dead
    .command('list')
    .description('list dead jobs')
    .option('-b, --broker <url>', 'broker URL', parse.brokerUrl)
    .option('-q, --queue <name>', 'only this queue', parse.queueName)
    .option('--limit <n>', 'at most this many per queue', parse.positiveInt, 50)
    .option('--json', 'print a JSON array')
    .action(async (flags: { broker?: string; queue?: string; limit: number; json?: boolean }) => {
      await withBroker(flags.broker, async (b) => {
        const dead: { id: string; task: string; queue: string; attempt: number; reason: string; diedAt: number }[] = [];
        for (const queue of await queuesOf(b, flags.queue)) {
          for (const d of await b.listDead(queue, flags.limit))
            dead.push({
              id: d.job.id,
              task: d.job.task,
              queue,
              attempt: d.job.attempt,
              reason: d.reason,
              diedAt: d.diedAt,
            });
        }
        if (flags.json) printJson(dead);
        else
          printTable(
            ['ID', 'TASK', 'QUEUE', 'RETRIES', 'DIED', 'REASON'],
            dead.map((d) => [d.id, d.task, d.queue, d.attempt, new Date(d.diedAt).toISOString(), d.reason]),
          );
      });
    });
  dead
    .command('retry')
    .description('put dead jobs back on their queue')
    .argument('[ids...]', 'job ids')
    .option('--all', 'every dead job')
    .option('-b, --broker <url>', 'broker URL', parse.brokerUrl)
    .option('-q, --queue <name>', 'only this queue', parse.queueName)
    .option('--json', 'print JSON')
    .action(async (ids: string[], flags: { all?: boolean; broker?: string; queue?: string; json?: boolean }) => {
      if (!flags.all && ids.length === 0) throw new UsageError("dead retry: give job ids or '--all'");
      if (flags.all && ids.length > 0) throw new UsageError("dead retry: give job ids or '--all', not both");
      const { requeued, unknown } = await withBroker(flags.broker, async (b) => {
        const queues = await queuesOf(b, flags.queue);
        if (flags.all) {
          let total = 0;
          for (const queue of queues) total += await b.retryDead(queue, undefined);
          return { requeued: total, unknown: [] };
        }
        // One id at a time, so the ones that are not in the dead set can be named.
        const missing: string[] = [];
        let total = 0;
        for (const id of new Set(ids)) {
          let found = 0;
          for (const queue of queues) found += await b.retryDead(queue, [id]);
          if (found === 0) missing.push(id);
          total += found;
        }
        return { requeued: total, unknown: missing };
      });
      if (flags.json) printJson({ requeued, notDead: unknown });
      else process.stdout.write(`requeued ${requeued} dead job(s)\n`);
      if (unknown.length > 0) {
        const where = flags.queue === undefined ? 'the dead set' : `the dead set of queue ${flags.queue}`;
        process.stderr.write(`error: not in ${where}: ${unknown.join(', ')}\n`);
        process.exitCode = 1;
      }
    });
  dead
    .command('purge')
    .description('drop dead jobs')
    .option('-b, --broker <url>', 'broker URL', parse.brokerUrl)
    .option('-q, --queue <name>', 'only this queue', parse.queueName)
    .option('--json', 'print JSON')
    .action(async (flags: { broker?: string; queue?: string; json?: boolean }) => {
      const n = await withBroker(flags.broker, async (b) => {
        let total = 0;
        for (const queue of await queuesOf(b, flags.queue)) total += await b.purgeDead(queue);
        return total;
      });
      if (flags.json) printJson({ purged: n });
      else process.stdout.write(`purged ${n} dead job(s)\n`);
    });

  program
    .command('inspect')
    .description("show the nodes of the cluster, the queues, each node's pool stats, or the revoked job ids")
    .argument(
      '[what]',
      'nodes, queues, stats or revoked',
      (v: string) => {
        if (v !== 'nodes' && v !== 'queues' && v !== 'stats' && v !== 'revoked')
          throw new UsageError(`inspect: argument '${v}' is invalid. expected nodes, queues, stats or revoked`);
        return v;
      },
      'nodes',
    )
    .option('-b, --broker <url>', 'broker URL', parse.brokerUrl)
    .option('--node <name>', 'stats: only this node (its name or id)')
    .addOption(timeoutOption('stats: how long to wait for the nodes to answer'))
    .option('--json', 'print JSON')
    .action(
      async (
        what: 'nodes' | 'queues' | 'stats' | 'revoked',
        flags: { broker?: string; node?: string; timeout: number; json?: boolean },
      ) => {
        await withBroker(flags.broker, async (b) => {
          if (what === 'nodes') {
            const nodes = await b.listNodes();
            if (flags.json) printJson(nodes);
            else
              printTable(
                ['NODE', 'HOST', 'PID', 'QUEUES', 'CONCURRENCY', 'STARTED'],
                nodes.map((n) => [
                  n.id,
                  n.host,
                  n.pid,
                  n.queues.join(','),
                  n.concurrency,
                  new Date(n.startedAt).toISOString(),
                ]),
              );
            return;
          }
          if (what === 'stats') {
            await inspectStats(b, flags.node, flags.timeout, flags.json === true);
            return;
          }
          if (what === 'revoked') {
            const revoked = await b.listRevoked();
            if (flags.json) printJson(revoked);
            else
              printTable(
                ['ID', 'REVOKED', 'REMEMBERED UNTIL'],
                revoked.map((r) => [r.id, new Date(r.revokedAt).toISOString(), new Date(r.expiresAt).toISOString()]),
              );
            return;
          }
          const counts = await b.counts(await b.knownQueues());
          if (flags.json) printJson(counts);
          else
            printTable(
              ['QUEUE', 'WAITING', 'RESERVED', 'DELAYED', 'DEAD'],
              counts.map((c) => [c.queue, c.waiting, c.reserved, c.delayed, c.dead]),
            );
        });
      },
    );
}

/** Each node answers a 'stats' control request with its Worker stats (pool, consumer counts). */
async function inspectStats(
  broker: NodeAsker,
  node: string | undefined,
  timeoutMs: number,
  json: boolean,
): Promise<void> {
  const answers = await askNodes(broker, 'stats', [], node, timeoutMs);
  if (json) {
    printJson(
      answers.map(({ node: n, reply }) => ({
        node: n.name,
        nodeId: n.id,
        stats: reply?.ok ? reply.value : null,
        ...(reply?.ok ? {} : { error: reply?.error ?? `no reply within ${timeoutMs} ms` }),
      })),
    );
  } else {
    printTable(
      ['NODE', 'PROCESSES', 'BUSY', 'RESERVED', 'DONE', 'FAILED', 'LOST', 'RESTARTS', 'AUTOSCALE'],
      answers.map(({ node: n, reply }) => {
        if (!reply?.ok)
          return [
            n.name,
            reply === undefined ? `no reply within ${timeoutMs} ms` : `error: ${reply.error ?? 'failed'}`,
          ];
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
  if (answers.some((a) => a.reply?.ok !== true)) process.exitCode = 1;
}
