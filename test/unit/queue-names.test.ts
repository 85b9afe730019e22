/**
 * One rule for queue names, wherever a name comes in: the Client's `queue`,
 * the Worker's `queues`, the CLI's `--queue`/`-Q`/`purge <queue>`, and both
 * brokers. A name that one of them takes, every one takes; a name that could
 * spell another key ("default:delayed") or a hash tag is refused by all.
 */
import { randomUUID } from 'node:crypto';
import { InvalidArgumentError } from 'commander';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { Client, OptionError, Worker } from 'prefork';
import type { Broker } from 'prefork/broker';
import * as parse from '../../dist/cli/parsers.js';

const silent = pino({ level: 'silent' });
const APP = '/srv/app/tasks.mjs';

const REFUSED = ['default:delayed', 'default:dead', 'rd:default', 'a b', '{x}', 'x}', '', 'é', 'a/b'];
const ACCEPTED = ['default', 'critical', 'a.b-c_d', 'Q1', '__proto__', 'constructor', 'toString'];

const clients: Client[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

function client(): Client {
  const c = new Client({ broker: `memory://queue-names-${randomUUID()}`, logger: silent });
  clients.push(c);
  return c;
}

/** What `take` threw, or 'accepted'. */
function outcome(take: () => unknown): unknown {
  try {
    take();
    return 'accepted';
  } catch (err) {
    return err;
  }
}

describe('queue names', () => {
  it.each(REFUSED)('%j is refused by the Client, the Worker and the CLI alike, each naming it', async (name) => {
    const enqueued = await client()
      .enqueue('t', [], { queue: name })
      .catch((e: unknown) => e);
    expect(enqueued).toBeInstanceOf(OptionError);
    expect(enqueued).toMatchObject({ option: 'queue', value: name });

    for (const queues of [[name], name]) {
      const worker = outcome(() => new Worker({ app: APP, broker: 'memory://queue-names', queues, logger: silent }));
      expect(worker, `queues: ${JSON.stringify(queues)}`).toBeInstanceOf(OptionError);
      expect(worker).toMatchObject({ option: 'queues' });
    }

    // --queue, purge <queue>, dead --queue; and -Q for the worker.
    expect(outcome(() => parse.queueName(name))).toBeInstanceOf(InvalidArgumentError);
    expect(outcome(() => parse.queues(name))).toBeInstanceOf(InvalidArgumentError);
  });

  it.each(ACCEPTED)('%j is taken by the Client, the Worker and the CLI alike', async (name) => {
    const c = client();
    await c.enqueue('t', [], { queue: name });
    expect(await (c.broker as Broker).counts([name])).toMatchObject([{ queue: name, waiting: 1 }]);
    expect(outcome(() => new Worker({ app: APP, broker: 'memory://queue-names', queues: name, logger: silent }))).toBe(
      'accepted',
    );
    expect(parse.queueName(name)).toBe(name);
    expect(parse.queues(name)).toBe(name);
  });
});
