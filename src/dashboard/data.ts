import type { BrokerAdmin, ResultRecord } from '../broker/types.js';
import { listedJobJson } from '../cli/job-format.js';
import { recordJson } from '../cli/print.js';
import type { JobTrails, TrailStep } from './job-trails.js';
import { jobIdQuery, pageQuery } from './request-input.js';

/** One page of a queue's jobs, as `prefork jobs --json` prints it. */
export async function jobPage(
  broker: Pick<BrokerAdmin, 'listJobs'>,
  params: URLSearchParams,
): Promise<Record<string, unknown>> {
  const { queue, state, limit, cursor } = pageQuery(params);
  const page = await broker.listJobs(queue, state, limit, cursor);
  return { queue, state, jobs: page.jobs.map(listedJobJson), next: page.next ?? null };
}

/**
 * One job: its stored state, arguments, progress and error, as `prefork
 * result --json` prints it (found wherever it is, as `handle.state()`
 * finds it), and the steps of its life the dashboard saw in the events.
 */
export async function oneJob(
  client: { getState(id: string): Promise<ResultRecord | undefined> },
  trails: JobTrails,
  params: URLSearchParams,
): Promise<{ found: boolean; job: Record<string, unknown> }> {
  const id = jobIdQuery(params);
  const history: TrailStep[] = trails.of(id);
  const record = await client.getState(id);
  if (record === undefined) return { found: false, job: { id, state: 'PENDING', unknown: true, history } };
  return { found: true, job: { ...recordJson(record), history } };
}
