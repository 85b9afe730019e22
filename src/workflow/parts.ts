import { Signature } from '../enqueue-options.js';
import { OptionError } from '../errors.js';

export { Signature, task, type SignatureOptions } from '../enqueue-options.js';

/** Steps that run one after the other, each given the previous one's result (`chain(...)`). */
export class Chain {
  /** What this part is. */
  readonly kind = 'chain';
  /** Made by `chain()`. */
  constructor(
    /** The steps, in order. */
    readonly steps: readonly WorkflowPart[],
  ) {
    Object.freeze(this);
  }
}

/** Members that run in parallel; the group's result is the list of theirs, in member order (`group([...])`). */
export class Group {
  /** What this part is. */
  readonly kind = 'group';
  /** Made by `group()`. */
  constructor(
    /** The members, in order. */
    readonly members: readonly WorkflowPart[],
  ) {
    Object.freeze(this);
  }
}

/** A group and a callback run once, with the members' results, when every member succeeded (`chord(...)`). */
export class Chord {
  /** What this part is. */
  readonly kind = 'chord';
  /** Made by `chord()`. */
  constructor(
    /** The members, in order. */
    readonly members: readonly WorkflowPart[],
    /** Runs once every member succeeded, with the list of their results first. */
    readonly callback: WorkflowPart,
  ) {
    Object.freeze(this);
  }
}

/** Anything `client.enqueue` takes as a workflow: a signature, a chain, a group or a chord. */
export type WorkflowPart = Signature | Chain | Group | Chord;

export function isWorkflowPart(value: unknown): value is WorkflowPart {
  return value instanceof Signature || value instanceof Chain || value instanceof Group || value instanceof Chord;
}

const PART = 'a signature, chain, group or chord (task(), chain(), group(), chord())';

function checkPart(value: unknown, where: string): WorkflowPart {
  if (!isWorkflowPart(value)) throw new OptionError(where, value, PART);
  return value;
}

function checkMembers(members: unknown, where: string): WorkflowPart[] {
  if (!Array.isArray(members)) throw new OptionError(where, members, 'an array of signatures or workflows');
  if (members.length === 0) throw new OptionError(where, members, 'at least one member (an empty group)');
  return members.map((m: unknown, i) => checkPart(m, `${where}[${i}]`));
}

/**
 * Steps run one after another; each receives the previous step's result as
 * its first argument (unless immutable). A chain given as a step is spliced
 * in (the same steps run the same way, as Celery's `|` does): a chain built
 * a step at a time, `steps.reduce((c, s) => chain(c, s))`, stays one level
 * deep however long it grows, where nesting would overflow the stack.
 */
export function chain(...steps: WorkflowPart[]): Chain {
  if (steps.length === 0) throw new OptionError('chain', steps, 'at least one step');
  return new Chain(
    Object.freeze(
      steps.flatMap((s: unknown, i) => {
        const part = checkPart(s, `chain step ${i + 1}`);
        return part instanceof Chain ? part.steps : [part];
      }),
    ),
  );
}

/** Members run in parallel, on any nodes; the result is the list of their results, in member order. */
export function group(members: readonly WorkflowPart[]): Group {
  return new Group(Object.freeze(checkMembers(members, 'group members')));
}

/** The members run in parallel; `callback` runs exactly once, with the list of their results, when all succeeded. */
export function chord(members: readonly WorkflowPart[] | Group, callback: WorkflowPart): Chord {
  const list = members instanceof Group ? members.members : checkMembers(members, 'chord members');
  if (callback === undefined) throw new OptionError('chord callback', callback, `${PART}: a chord needs a callback`);
  return new Chord(Object.freeze([...list]), checkPart(callback, 'chord callback'));
}
