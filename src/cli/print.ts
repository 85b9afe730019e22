import type { ResultRecord } from '../broker/types.js';
import { argsJson, argsText } from './job-format.js';
import { jsonText } from './json-text.js';

/**
 * `--json` output, one convention for every command: a single JSON document
 * on one line — an array for a list (nodes, queues, dead jobs, replies), an
 * object for one thing (a result, an enqueued id, what a purge or a retry did).
 */
export function printJson(value: unknown): void {
  process.stdout.write(`${jsonText(value)}\n`);
}

const iso = (at: number): string => new Date(at).toISOString();

/** What a state means, for the states that are not the end of the story. */
function stateNote(record: ResultRecord): string {
  switch (record.state) {
    case 'PENDING':
      if (record.dueAt === undefined) return ` (waiting in queue ${record.queue})`;
      return record.rateLimited === true
        ? ` (waiting for its rate-limit turn, due at ${iso(record.dueAt)})`
        : ` (delayed until ${iso(record.dueAt)})`;
    case 'RECEIVED':
      // receivedAt: found held by a node that does not track starts, so it may be running already.
      return record.receivedAt === undefined
        ? ' (reserved by a node, not started yet)'
        : ' (held by a node: buffered or running; it does not track starts)';
    case 'STARTED':
      return ' (running)';
    case 'RETRY':
      return record.dueAt === undefined
        ? ' (failed; another attempt is scheduled)'
        : ` (attempt ${record.retries + 1} failed; attempt ${record.retries + 2} due at ${iso(record.dueAt)})`;
    default:
      return '';
  }
}

/** A result as `prefork result --json` prints it: the arguments decoded (whole) in place of their msgpack bytes. */
export function recordJson(record: ResultRecord): Record<string, unknown> {
  const { payload, payloadBytes, ...rest } = record;
  return { ...rest, ...argsJson({ payload, payloadBytes }), ...(payloadBytes === undefined ? {} : { payloadBytes }) };
}

/** A result for people (one field a line) or as JSON. */
export function printRecord(record: ResultRecord, json: boolean): void {
  const { payload, payloadBytes } = record;
  const kept = { payload, payloadBytes };
  if (json) {
    printJson(recordJson(record));
    return;
  }
  const lines = [
    `id:       ${record.id}`,
    `task:     ${record.task}`,
    `queue:    ${record.queue}`,
    `state:    ${record.state}${stateNote(record)}`,
  ];
  if (payload !== undefined || payloadBytes !== undefined) lines.push(`args:     ${argsText(kept)}`);
  if (record.progressAt !== undefined)
    lines.push(`progress: ${jsonText(record.progress)} (at ${new Date(record.progressAt).toISOString()})`);
  if (record.ignoreResult === true)
    lines.push(
      `result:   not kept: task "${record.task}" is defined with ignoreResult (enqueue with --no-ignore-result to keep it)`,
    );
  else if (record.state === 'SUCCESS') lines.push(`value:    ${jsonText(record.value)}`);
  if (record.error) lines.push(`error:    ${record.error.name}: ${record.error.message}`);
  if (record.node) lines.push(`node:     ${record.node}${record.pid ? ` (pid ${record.pid})` : ''}`);
  if (record.runtime !== undefined) lines.push(`runtime:  ${record.runtime} ms`);
  lines.push(`retries:  ${record.retries}`);
  for (const [key, at] of [
    ['enqueued', record.enqueuedAt],
    ['received', record.receivedAt],
    ['started', record.startedAt],
    ['finished', record.finishedAt],
  ] as const) {
    if (at !== undefined) lines.push(`${`${key}:`.padEnd(10)}${iso(at)}`);
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

/** A table with aligned columns. */
export function printTable(header: string[], rows: (string | number)[][]): void {
  const cells = [header, ...rows.map((r) => r.map(String))];
  const widths = header.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  const out = cells.map((r) =>
    r
      .map((c, i) => c.padEnd(widths[i] as number))
      .join('  ')
      .trimEnd(),
  );
  process.stdout.write(`${out.join('\n')}\n`);
}
