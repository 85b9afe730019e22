import type { WorkflowNodeView, WorkflowView } from '../workflow/view.js';
import { jsonText } from './json-text.js';
import { printJson } from './print.js';

/** Longest value shown on a line of the tree (the rest is cut, `--json` has it whole). */
const VALUE_MAX = 60;

function short(value: unknown): string {
  const text = jsonText(value);
  return text.length > VALUE_MAX ? `${text.slice(0, VALUE_MAX - 1)}…` : text;
}

function label(node: WorkflowNodeView): string {
  const parts = [node.task ?? node.kind, node.state];
  if (node.id !== undefined) parts.push(node.id);
  if (node.state === 'SUCCESS' && node.kind === 'task') parts.push(`→ ${short(node.value)}`);
  if (node.error !== undefined) parts.push(`${node.error.name}: ${node.error.message}`);
  return parts.join('  ');
}

/** The tree's lines, drawn with box characters, callbacks under their job. */
function lines(node: WorkflowNodeView, prefix: string, out: string[]): void {
  const below: [string, WorkflowNodeView][] = (node.children ?? []).map((c) => ['', c]);
  if (node.onSuccess !== undefined) below.push(['onSuccess: ', node.onSuccess]);
  if (node.onError !== undefined) below.push(['onError: ', node.onError]);
  below.forEach(([tag, child], i) => {
    const last = i === below.length - 1;
    out.push(`${prefix}${last ? '└─ ' : '├─ '}${tag}${label(child)}`);
    lines(child, `${prefix}${last ? '   ' : '│  '}`, out);
  });
}

/** A workflow for people (its state, then its tree, one node a line) or as JSON (`handle.state()`'s value). */
export function printWorkflow(view: WorkflowView, json: boolean): void {
  if (json) {
    printJson(view);
    return;
  }
  const out = [`workflow: ${view.id}`, `state:    ${view.state}`];
  if (view.state === 'SUCCESS') out.push(`value:    ${short(view.value)}`);
  if (view.failure !== undefined)
    out.push(
      `failed:   ${view.failure.name} (job ${view.failure.id}): ${view.failure.error.name}: ${view.failure.error.message}`,
    );
  out.push(label(view.tree));
  lines(view.tree, '', out);
  process.stdout.write(`${out.join('\n')}\n`);
}
