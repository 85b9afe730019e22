import type { CompiledWorkflow, NewJob, WorkflowNode, WorkflowNodeKind } from '../broker/types.js';

export type { CompiledWorkflow, WorkflowNode, WorkflowNodeKind } from '../broker/types.js';
import { OptionError } from '../errors.js';
import { memberJobId } from './member-id.js';
import { Chain, Chord, Group, isWorkflowPart, Signature, type WorkflowPart } from './parts.js';

/**
 * Builds the job of one signature (the Client's option checks); `where` names its place for errors,
 * `id` is the job id its node is given (member-id.ts: the workflow and node it names).
 */
export type BuildJob = (signature: Signature, where: string, id: string) => NewJob;

function kindOf(part: WorkflowPart): WorkflowNodeKind {
  if (part instanceof Signature) return 'task';
  if (part instanceof Chain) return 'chain';
  if (part instanceof Group) return 'group';
  return 'chord';
}

function childrenOf(part: WorkflowPart): readonly WorkflowPart[] {
  if (part instanceof Chain) return part.steps;
  if (part instanceof Group) return part.members;
  if (part instanceof Chord) return [new Group(part.members), part.callback];
  return [];
}

function childName(part: WorkflowPart, i: number): string {
  if (part instanceof Chain) return `chain step ${i + 1}`;
  if (part instanceof Group) return `group member ${i + 1}`;
  return i === 0 ? 'chord members' : 'chord callback';
}

/** Refuses what the part factories cannot stop: a cycle, an empty list, a non-part (built by hand). */
function checkTree(part: unknown, where: string, path: Set<unknown>): void {
  if (!isWorkflowPart(part))
    throw new OptionError(where, part, 'a signature, chain, group or chord (task(), chain(), group(), chord())');
  if (path.has(part)) throw new OptionError(where, '(a workflow that contains itself)', 'no cycle');
  if (part instanceof Signature) return;
  const children = childrenOf(part);
  if (children.length === 0) throw new OptionError(where, [], 'at least one member (an empty group or chain)');
  path.add(part);
  children.forEach((child, i) => checkTree(child, `${where} > ${childName(part, i)}`, path));
  path.delete(part);
}

/**
 * Turns a workflow into numbered nodes and their jobs, checking every step
 * before anything is enqueued: a bad one throws OptionError naming its place
 * (`workflow > chain step 2 > group member 3`). A chord is a chain of its
 * group and its callback; a group followed by a step in a chain is the same thing.
 */
export function compileWorkflow(root: WorkflowPart, id: string, build: BuildJob): CompiledWorkflow {
  checkTree(root, 'workflow', new Set());
  const nodes: WorkflowNode[] = [];
  const queues: string[] = [];
  const queueIndex = new Map<string, number>();
  const callbacks: { owner: number; which: 'onSuccess' | 'onError'; sig: unknown; where: string }[] = [];
  const addTask = (sig: Signature, where: string, node: WorkflowNode): void => {
    const job = build(sig, where, memberJobId(id, nodes.length - 1));
    let q = queueIndex.get(job.queue);
    if (q === undefined) {
      q = queues.length;
      queues.push(job.queue);
      queueIndex.set(job.queue, q);
    }
    node.job = job;
    node.queue = q;
    node.immutable = sig.options.immutable === true;
    const index = nodes.length - 1;
    if (sig.options.onSuccess !== undefined)
      callbacks.push({ owner: index, which: 'onSuccess', sig: sig.options.onSuccess, where: `${where} onSuccess` });
    if (sig.options.onError !== undefined)
      callbacks.push({ owner: index, which: 'onError', sig: sig.options.onError, where: `${where} onError` });
  };
  const blank = (kind: WorkflowNodeKind, parent: number, pos: number): WorkflowNode => ({
    kind,
    parent,
    pos,
    first: -1,
    count: 0,
    queue: -1,
    immutable: false,
    onSuccess: -1,
    onError: -1,
  });
  // Breadth-first: each node's children are numbered together, after every node before it.
  const pending: { part: WorkflowPart; parent: number; pos: number; where: string }[] = [
    { part: root, parent: -1, pos: 0, where: 'workflow' },
  ];
  for (let at = 0; at < pending.length; at++) {
    const { part, parent, pos, where } = pending[at] as (typeof pending)[number];
    const node = blank(kindOf(part), parent, pos);
    nodes.push(node);
    const index = nodes.length - 1;
    if (parent >= 0) {
      const p = nodes[parent] as WorkflowNode;
      if (p.first < 0) p.first = index;
      p.count++;
    }
    if (part instanceof Signature) addTask(part, where, node);
    else
      childrenOf(part).forEach((child, i) =>
        pending.push({ part: child, parent: index, pos: i, where: `${where} > ${childName(part, i)}` }),
      );
  }
  for (let at = 0; at < callbacks.length; at++) {
    const { owner, which, sig, where } = callbacks[at] as (typeof callbacks)[number];
    if (!(sig instanceof Signature)) throw new OptionError(where, sig, 'a signature (task(...))');
    const node = blank('task', -1, 0);
    nodes.push(node);
    (nodes[owner] as WorkflowNode)[which] = nodes.length - 1;
    addTask(sig, where, node);
  }
  for (const [i, node] of nodes.entries()) if (node.job) node.job.workflow = { id, node: i, queues };
  return { id, nodes, queues };
}
