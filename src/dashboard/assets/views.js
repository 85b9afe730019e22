// The nodes with their children, the queues and the runtimes: rebuilt from
// each snapshot. Buttons appear only when the dashboard is not read-only.
import { bytes, h, ms, put, table } from './dom.js';

/** ctx: { readOnly, run(action, body), browse(queue, state) } */
export function renderNodes(el, nodes, ctx) {
  if (nodes.length === 0) return put(el, h('p', { class: 'empty' }, 'no live worker nodes'));
  put(
    el,
    nodes.map((node) => nodeCard(node, ctx)),
  );
}

function nodeCard(node, ctx) {
  const stats = node.stats;
  const pool = stats?.pool;
  const facts = [
    `${node.host} pid ${node.pid}`,
    `queues ${node.queues.join(', ')}`,
    pool?.autoscale ? `autoscale ${pool.autoscale.max},${pool.autoscale.min}` : `concurrency ${node.concurrency}`,
  ];
  if (stats?.paused?.length > 0) facts.push(`paused here: ${stats.paused.join(', ')}`);
  if (stats?.quiet) facts.push('quiet');
  const totals = pool
    ? h(
        'div',
        { class: 'totals' },
        total('done', pool.totals.done),
        total('failed', pool.totals.failed),
        total('lost', pool.totals.lost),
        total('restarts', pool.totals.restarts),
        total('reserved', pool.reserved),
      )
    : null;
  const live = pool?.processes.filter((p) => p.state !== 'exited') ?? [];
  return h(
    'div',
    { class: 'node', 'data-node': node.name, 'data-processes': live.length },
    h('div', { class: 'node-head' }, h('strong', null, node.name), h('span', { class: 'facts' }, facts.join(' · '))),
    node.error ? h('p', { class: 'fail' }, node.error) : totals,
    ctx.readOnly ? null : nodeActions(node, ctx),
    pool
      ? table(
          ['PID', 'STATE', 'CURRENT JOB', 'RUNTIME', 'JOBS DONE', 'RSS'],
          live.map((p) =>
            h(
              'tr',
              { 'data-pid': p.pid, 'data-state': p.state },
              h('td', null, p.pid),
              h('td', { class: `state-${p.state}` }, p.state),
              h(
                'td',
                null,
                p.current ? jobLink(p.current.id, `${p.current.name}[${p.current.id.slice(0, 8)}]`, ctx) : '-',
              ),
              h('td', null, p.current ? ms(p.current.runtime) : '-'),
              h('td', { class: 'jobs-done' }, p.jobsDone),
              h('td', null, bytes(p.rss)),
            ),
          ),
          { class: 'children' },
        )
      : null,
  );
}

function total(name, value) {
  return h('span', { class: 'total', 'data-total': name }, h('b', null, value), ` ${name}`);
}

function nodeActions(node, ctx) {
  const target = { node: node.id };
  const bounds = h('input', { name: 'autoscale', placeholder: 'MAX,MIN', size: 7 });
  return h(
    'div',
    { class: 'actions' },
    h(
      'button',
      { 'data-action': 'grow', onclick: () => ctx.run('control', { command: 'grow', args: ['1'], ...target }) },
      'grow +1',
    ),
    h(
      'button',
      { 'data-action': 'shrink', onclick: () => ctx.run('control', { command: 'shrink', args: ['1'], ...target }) },
      'shrink -1',
    ),
    bounds,
    h(
      'button',
      {
        'data-action': 'autoscale',
        onclick: () => ctx.run('control', { command: 'autoscale', args: [bounds.value], ...target }),
      },
      'autoscale',
    ),
    h(
      'button',
      {
        'data-action': 'shutdown',
        class: 'danger',
        onclick: () => {
          if (confirm(`Stop node ${node.name} (warm: it finishes the jobs it runs)?`))
            ctx.run('control', { command: 'shutdown', ...target });
        },
      },
      'shutdown',
    ),
  );
}

export function jobLink(id, label, ctx) {
  return h('a', { href: '#job-section', class: 'job-link', 'data-job-link': id, onclick: () => ctx.show(id) }, label);
}

export function renderQueues(el, queues, ctx) {
  if (queues.length === 0) return put(el, h('p', { class: 'empty' }, 'no queues yet'));
  const rows = queues.map((q) =>
    h(
      'tr',
      { 'data-queue': q.queue },
      h('td', null, q.queue),
      h('td', { class: 'waiting' }, q.waiting),
      h('td', { class: 'reserved' }, q.reserved),
      h('td', { class: 'delayed' }, q.delayed),
      h('td', { class: 'dead' }, q.dead),
      h('td', { class: 'paused' }, q.paused ? 'all nodes' : q.pausedOn.length > 0 ? q.pausedOn.join(', ') : '-'),
      h(
        'td',
        { class: 'actions' },
        ['waiting', 'delayed', 'dead'].map((state) =>
          h('button', { 'data-browse': state, onclick: () => ctx.browse(q.queue, state) }, state),
        ),
        ctx.readOnly
          ? null
          : h(
              'button',
              {
                'data-action': q.paused ? 'resume' : 'pause',
                onclick: () => ctx.run('control', { command: q.paused ? 'resume' : 'pause', args: [q.queue] }),
              },
              q.paused ? 'resume' : 'pause',
            ),
      ),
    ),
  );
  put(el, table(['QUEUE', 'WAITING', 'RESERVED', 'DELAYED', 'DEAD', 'PAUSED', ''], rows, { id: 'queues-table' }));
}

export function renderRuntimes(el, runtimes) {
  if (runtimes.length === 0)
    return put(el, h('p', { class: 'empty' }, 'no job has finished since the dashboard started'));
  put(
    el,
    table(
      ['TASK', 'JOBS', 'P50', 'P90', 'P99', 'MAX'],
      runtimes.map((r) =>
        h(
          'tr',
          { 'data-task': r.task },
          [r.task, r.count, ms(r.p50), ms(r.p90), ms(r.p99), ms(r.max)].map((c) => h('td', null, c)),
        ),
      ),
      { id: 'runtimes-table' },
    ),
  );
}
