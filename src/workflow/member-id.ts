/**
 * A workflow member's job id names its workflow and its node:
 * `<workflow id>.<node index>`. So a step not enqueued yet (in no queue, in
 * no job index) is found by its own id: its workflow's record, read as the
 * id says, lists it (and the caller checks that it does). Nothing more is
 * stored, so nothing outlives the workflow's record.
 */

/** The job id of node `index` of workflow `workflowId`. */
export function memberJobId(workflowId: string, index: number): string {
  return `${workflowId}.${index}`;
}

/** The workflow and node a member's job id names; undefined when `id` is not shaped as one. */
export function memberOfJobId(id: string): { workflowId: string; index: number } | undefined {
  const dot = id.lastIndexOf('.');
  if (dot <= 0) return undefined;
  const digits = id.slice(dot + 1);
  // Canonical digits only: one node has one id.
  if (!/^(0|[1-9]\d{0,8})$/.test(digits)) return undefined;
  return { workflowId: id.slice(0, dot), index: Number(digits) };
}
