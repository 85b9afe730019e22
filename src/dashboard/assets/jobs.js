// A queue's jobs, one bounded page at a time (the server reads a page with
// the same call as `prefork jobs`), and one job by id.
import { getJson } from './api.js';
import { h, json, ms, put, table, time } from './dom.js';
import { jobLink } from './views.js';

const PAGE = 25;

export class JobsBrowser {
  constructor(ctx) {
    this.ctx = ctx;
    this.queue = undefined;
    this.state = 'waiting';
    this.cursor = undefined;
    this.next = undefined;
    // Loads asked so far, and whether the last one is still in flight: only its answer is shown.
    this.asked = 0;
    this.busy = false;
    this.select = document.getElementById('jobs-queue');
    this.out = document.getElementById('jobs');
    this.nextButton = document.getElementById('jobs-next');
    this.select.addEventListener('change', () => this.open(this.select.value, this.state));
    for (const tab of document.querySelectorAll('#jobs-states button'))
      tab.addEventListener('click', () => this.open(this.queue, tab.dataset.state));
    document.getElementById('jobs-first').addEventListener('click', () => this.open(this.queue, this.state));
    this.nextButton.addEventListener('click', () => this.load(this.next));
  }

  /** The queues to choose from (the snapshot's); the first is shown until one is chosen. */
  setQueues(names) {
    const current = [...this.select.options].map((o) => o.value);
    if (current.join('\n') !== names.join('\n')) {
      put(
        this.select,
        names.map((n) => h('option', { value: n }, n)),
      );
      if (this.queue !== undefined && names.includes(this.queue)) this.select.value = this.queue;
    }
    if (this.queue === undefined && names.length > 0) this.open(names[0], this.state);
  }

  open(queue, state) {
    this.queue = queue;
    this.state = state;
    if (queue !== undefined) this.select.value = queue;
    for (const tab of document.querySelectorAll('#jobs-states button'))
      tab.classList.toggle('active', tab.dataset.state === state);
    return this.load(undefined);
  }

  /**
   * Reads the first page again (after a sample or an action), unless a
   * later page is shown or a load is in flight (a refresh answered after a
   * click on next would take the page back to the first).
   */
  refresh() {
    if (this.queue !== undefined && this.cursor === undefined && !this.busy) return this.load(undefined);
  }

  async load(cursor) {
    if (this.queue === undefined) return;
    const seq = ++this.asked;
    this.busy = true;
    try {
      const query = new URLSearchParams({ queue: this.queue, state: this.state, limit: String(PAGE) });
      if (cursor !== undefined) query.set('cursor', cursor);
      const { status, body } = await getJson(`/api/jobs?${query}`);
      // Another queue, tab or page was asked meanwhile: this answer is stale.
      if (seq !== this.asked) return;
      if (status !== 200) return put(this.out, h('p', { class: 'fail' }, body.error ?? `error ${status}`));
      this.cursor = cursor;
      this.next = body.next ?? undefined;
      this.nextButton.disabled = this.next === undefined;
      put(this.out, this.render(body));
    } finally {
      if (seq === this.asked) this.busy = false;
    }
  }

  render(page) {
    const { state } = page;
    const header = ['ID', 'TASK', 'ARGS', 'RETRIES', 'ENQUEUED'];
    if (state === 'delayed') header.push('DUE');
    if (state === 'dead') header.push('DIED', 'REASON');
    if (!this.ctx.readOnly) header.push('');
    const rows = page.jobs.map((j) => {
      const cells = [
        jobLink(j.id, j.id, this.ctx),
        j.task,
        j.argsError ? `<${j.argsError}>` : json(j.args, 60),
        j.attempt,
        time(j.enqueuedAt),
      ];
      if (state === 'delayed') cells.push(time(j.dueAt));
      if (state === 'dead') cells.push(time(j.diedAt), h('span', { class: 'reason' }, j.reason ?? ''));
      if (!this.ctx.readOnly) cells.push(this.buttons(j, state, page.queue));
      return h(
        'tr',
        { 'data-job-id': j.id },
        cells.map((c) => h('td', null, c)),
      );
    });
    const more = this.next === undefined ? 'end of the queue' : 'more: next page';
    return [
      table(header, rows, { id: 'jobs-table', 'data-queue': page.queue, 'data-state': state }),
      h('p', { class: 'hint' }, `${page.jobs.length} job(s) on this page; ${more}`),
    ];
  }

  buttons(job, state, queue) {
    if (state === 'dead')
      return [
        h(
          'button',
          { 'data-action': 'retry', onclick: () => this.ctx.run('dead-retry', { id: job.id, queue }) },
          'retry',
        ),
        h(
          'button',
          {
            'data-action': 'delete',
            class: 'danger',
            onclick: () => confirm(`Delete dead job ${job.id}?`) && this.ctx.run('dead-delete', { id: job.id, queue }),
          },
          'delete',
        ),
      ];
    return h('button', { 'data-action': 'revoke', onclick: () => this.ctx.run('revoke', { id: job.id }) }, 'revoke');
  }
}

const FINISHED = new Set(['SUCCESS', 'FAILURE', 'REVOKED']);

/** Jobs asked for so far: only the last one's answer is shown (one asked before may answer after it). */
let jobsAsked = 0;

/** One job: its record (as `prefork result --json`) and the steps the dashboard saw. */
export async function showJob(el, id, ctx) {
  const seq = ++jobsAsked;
  const { status, body } = await getJson(`/api/job?${new URLSearchParams({ id })}`);
  if (seq !== jobsAsked) return;
  if (status !== 200 && status !== 404) return put(el, h('p', { class: 'fail' }, body.error ?? `error ${status}`));
  const job = body;
  const fields = [
    ['id', job.id],
    ['task', job.task],
    ['queue', job.queue],
    ['state', job.unknown ? 'PENDING (unknown: never enqueued, or its result expired)' : job.state],
    ['args', job.argsError ? `<${job.argsError}>` : job.args === undefined ? undefined : JSON.stringify(job.args)],
    [
      'progress',
      job.progressAt === undefined ? undefined : `${JSON.stringify(job.progress)} at ${time(job.progressAt)}`,
    ],
    ['value', job.state === 'SUCCESS' ? JSON.stringify(job.value) : undefined],
    ['node', job.node === undefined ? undefined : `${job.node}${job.pid ? ` (pid ${job.pid})` : ''}`],
    ['runtime', job.runtime === undefined ? undefined : ms(job.runtime)],
    ['retries', job.retries],
    ['due', job.dueAt === undefined ? undefined : time(job.dueAt)],
    ['enqueued', job.enqueuedAt === undefined ? undefined : time(job.enqueuedAt)],
    ['started', job.startedAt === undefined ? undefined : time(job.startedAt)],
    ['finished', job.finishedAt === undefined ? undefined : time(job.finishedAt)],
  ].filter(([, v]) => v !== undefined);
  const error = job.error
    ? h(
        'div',
        { class: 'job-error' },
        h(
          'p',
          null,
          h('b', { class: 'error-name' }, job.error.name),
          ': ',
          h('span', { class: 'error-message' }, job.error.message),
        ),
        job.error.stack ? h('pre', { class: 'stack' }, job.error.stack) : null,
      )
    : null;
  const history = (job.history ?? []).map((s) =>
    h(
      'tr',
      null,
      [
        time(s.at),
        s.type,
        s.node,
        s.pid ?? '-',
        [s.runtimeMs === undefined ? '' : `in ${ms(s.runtimeMs)}`, s.error ? `${s.error.name}: ${s.error.message}` : '']
          .filter(Boolean)
          .join(', '),
      ].map((c) => h('td', null, c)),
    ),
  );
  const actions =
    ctx.readOnly || job.unknown || FINISHED.has(job.state)
      ? null
      : h(
          'div',
          { class: 'actions' },
          h('button', { 'data-action': 'revoke', onclick: () => ctx.run('revoke', { id: job.id }) }, 'revoke'),
          h(
            'button',
            {
              'data-action': 'terminate',
              class: 'danger',
              onclick: () => ctx.run('revoke', { id: job.id, terminate: true }),
            },
            'revoke and terminate',
          ),
        );
  put(
    el,
    h(
      'dl',
      { class: 'job', 'data-job': job.id, 'data-state': job.state },
      fields.map(([k, v]) => [h('dt', null, k), h('dd', { 'data-field': k }, v)]),
    ),
    error,
    actions,
    h('h3', null, 'History (events this dashboard saw)'),
    history.length === 0
      ? h('p', { class: 'empty' }, 'none seen')
      : table(['TIME', 'EVENT', 'NODE', 'PID', ''], history),
  );
}
