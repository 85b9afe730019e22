import type { Command } from 'commander';
import { brokerOption, namespaceOption } from '../broker-flags.js';
import type { ScheduleState } from '../../broker/types.js';
import { PreforkError, messageOf } from '../../errors.js';
import { withBroker } from '../connect.js';
import { printJson, printTable } from '../print.js';
import { UsageError } from '../usage-error.js';

/** One entry as `schedule list` shows it. */
interface EntryView {
  name: string;
  task?: string;
  args?: unknown;
  queue?: string;
  every?: number;
  cron?: string;
  tz?: string;
  misfire?: string;
  /** The next tick after now and after the latest handled (epoch ms), and as read in the entry's time zone. */
  nextRunAt?: number;
  nextRun?: string;
  lastTick?: number;
  lastRunAt?: number;
  lastJobId?: string;
  /** Why the stored definition or state could not be read, if it could not. */
  error?: string;
}

export function registerSchedule(program: Command): void {
  const schedule = program
    .command('schedule')
    .description('the periodic tasks the nodes run (prefork worker --schedule)');
  schedule
    .command('list')
    .description('each entry: its task, when it runs next (in its time zone), its last run and the job it enqueued')
    .addOption(brokerOption())
    .addOption(namespaceOption())
    .option('--json', 'print a JSON array')
    .action(async (flags: { broker?: string; namespace?: string; json?: boolean }) => {
      const states = await withBroker(flags, (b) => b.listSchedule());
      const views = await Promise.all(states.map((s) => view(s, Date.now())));
      if (flags.json) {
        printJson(views);
        return;
      }
      printTable(
        ['NAME', 'TASK', 'SCHEDULE', 'NEXT RUN', 'LAST RUN', 'LAST JOB'],
        views.map((v) => [
          v.name,
          v.task ?? '?',
          v.error ?? when(v),
          v.nextRun ?? '',
          v.lastTick === undefined ? 'never' : new Date(v.lastTick).toISOString(),
          v.lastJobId ?? '',
        ]),
      );
    });
  schedule
    .command('run')
    .description("enqueue an entry's job now, as its next tick would")
    .argument('<name>', 'the entry')
    .addOption(brokerOption())
    .addOption(namespaceOption())
    .option('--json', 'print JSON')
    .action(async (name: string, flags: { broker?: string; namespace?: string; json?: boolean }) => {
      const { entryFromDefinition } = await import('../../schedule/define.js');
      const { tickJob } = await import('../../schedule/tick-job.js');
      const job = await withBroker(flags, async (b) => {
        const states = await b.listSchedule();
        const state = states.find((s) => s.name === name);
        if (state?.definition === undefined)
          throw new UsageError(
            `schedule run: argument '${name}' is invalid. no such schedule entry (stored: ${states.map((s) => s.name).join(', ') || 'none'})`,
          );
        // What is stored is at fault, not a flag: not a usage error (exit 2, reworded for flags).
        if (state.damaged !== undefined && !state.definition) throw new PreforkError(damagedText(name, state.damaged));
        let entry;
        try {
          entry = entryFromDefinition(name, state.definition);
        } catch (err) {
          throw new PreforkError(messageOf(err), { cause: err });
        }
        const now = Date.now();
        const newJob = tickJob(entry, now, now);
        await b.enqueue([newJob]);
        return newJob;
      });
      if (flags.json) printJson({ id: job.id, entry: name, task: job.task, queue: job.queue });
      else process.stdout.write(`enqueued ${job.task}[${job.id}] on ${job.queue} for schedule entry ${name}\n`);
    });
  schedule
    .command('remove')
    .description(
      'forget stored entries no live node runs (the leader does so itself, but only while a node with a schedule runs)',
    )
    .argument('<names...>', 'the entries')
    .addOption(brokerOption())
    .addOption(namespaceOption())
    .option('--json', 'print JSON')
    .action(async (names: string[], flags: { broker?: string; namespace?: string; json?: boolean }) => {
      const { removed, notStored, running } = await withBroker(flags, async (b) => {
        const [stored, nodes] = await Promise.all([b.scheduleNames(), b.listNodes()]);
        // A live node stores an entry it runs again at once: removed, it would come back.
        const runBy = new Map<string, string[]>();
        for (const node of nodes)
          for (const entry of node.schedule ?? []) runBy.set(entry, [...(runBy.get(entry) ?? []), node.name]);
        const wanted = [...new Set(names)];
        const isStored = new Set(stored);
        const free = wanted.filter((n) => isStored.has(n) && !runBy.has(n));
        return {
          removed: free.length > 0 ? await b.dropSchedule(free) : 0,
          notStored: wanted.filter((n) => !isStored.has(n)),
          running: wanted
            .filter((n) => isStored.has(n) && runBy.has(n))
            .map((n) => ({ entry: n, nodes: runBy.get(n) ?? [] })),
        };
      });
      if (flags.json) printJson({ removed, notStored, running });
      else process.stdout.write(`removed ${removed} schedule entr${removed === 1 ? 'y' : 'ies'}\n`);
      for (const { entry, nodes } of running)
        process.stderr.write(
          `error: not removed: schedule entry ${entry} runs on ${nodes.join(', ')}: take it out of their schedule first\n`,
        );
      if (notStored.length > 0) process.stderr.write(`error: not in the schedule: ${notStored.join(', ')}\n`);
      if (running.length + notStored.length > 0) process.exitCode = 1;
    });
}

/** What an entry runs and when, from its stored definition (read as a node reads it). */
async function view(state: ScheduleState, now: number): Promise<EntryView> {
  const { entryFromDefinition } = await import('../../schedule/define.js');
  const { decodeBody } = await import('../../protocol/codec.js');
  const out: EntryView = { name: state.name };
  if (state.lastTick !== undefined) out.lastTick = state.lastTick;
  if (state.lastRunAt !== undefined) out.lastRunAt = state.lastRunAt;
  if (state.lastJobId !== undefined) out.lastJobId = state.lastJobId;
  if (state.damaged !== undefined) out.error = damagedText(state.name, state.damaged);
  // No definition to read (the key holds another type, or none is in it): the damage says it all.
  if (state.damaged !== undefined && !state.definition) return out;
  try {
    const entry = entryFromDefinition(state.name, state.definition ?? '');
    Object.assign(out, {
      task: entry.task,
      args: decodeBody(entry.payload),
      queue: entry.queue,
      misfire: entry.misfire,
    });
    if (entry.every !== undefined) out.every = entry.every;
    if (entry.cron !== undefined) Object.assign(out, { cron: entry.cron, tz: entry.tz });
    // A latest tick that does not read reads 0: the next run is then the next tick from now.
    const next = entry.rule.next(Math.max(now, state.last));
    if (next !== undefined) {
      out.nextRunAt = next;
      out.nextRun = inZone(next, entry.tz ?? 'UTC');
    }
  } catch (err) {
    out.error = out.error === undefined ? messageOf(err) : `${messageOf(err)}; ${state.damaged}`;
  }
  return out;
}

/** What `schedule list` and `schedule run` say of a stored entry whose state does not read. */
function damagedText(name: string, damaged: string): string {
  return `stored schedule entry ${JSON.stringify(name)}: ${damaged}`;
}

function when(v: EntryView): string {
  if (v.cron !== undefined) return `cron ${v.cron} (${v.tz ?? 'UTC'})`;
  return v.every === undefined ? '?' : `every ${v.every} ms`;
}

/** "2026-11-25 03:00:00 GMT+1": the time as read in `tz`, with its offset (or UTC). */
function inZone(at: number, tz: string): string {
  const parts = new Intl.DateTimeFormat('en-CA', {
    timeZone: tz,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hourCycle: 'h23',
    timeZoneName: 'shortOffset',
  }).formatToParts(new Date(at));
  const part = (type: Intl.DateTimeFormatPartTypes): string => parts.find((p) => p.type === type)?.value ?? '';
  const zone = tz === 'UTC' ? 'UTC' : part('timeZoneName');
  return `${part('year')}-${part('month')}-${part('day')} ${part('hour')}:${part('minute')}:${part('second')} ${zone}`;
}
