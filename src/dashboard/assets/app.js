// Wires the page: the first overview, then a snapshot per sample over
// server-sent events; actions report their outcome in #messages.
import { act, follow, getJson } from './api.js';
import { Charts } from './charts.js';
import { h, put, time } from './dom.js';
import { JobsBrowser, showJob } from './jobs.js';
import { renderNodes, renderQueues, renderRuntimes } from './views.js';

const $ = (id) => document.getElementById(id);
const charts = new Charts($('depth-chart'), $('rate-chart'));
let shownJob;

const ctx = {
  readOnly: true,
  async run(name, body) {
    const reply = await act(name, body);
    say(reply.lines ?? [reply.error ?? 'failed'], reply.ok);
    // The jobs table follows: the server samples after each action, and each snapshot refreshes it.
    if (shownJob !== undefined) void showJob($('job-detail'), shownJob, ctx);
  },
  browse(queue, state) {
    void jobs.open(queue, state);
    $('jobs-section').scrollIntoView();
  },
  show(id) {
    shownJob = id;
    $('job-id').value = id;
    void showJob($('job-detail'), id, ctx);
  },
};
const jobs = new JobsBrowser(ctx);

function say(lines, ok) {
  const box = $('messages');
  box.prepend(h('div', { class: ok ? 'message ok' : 'message fail' }, `${time(Date.now())} `, lines.join(' | ')));
  while (box.children.length > 5) box.lastElementChild.remove();
}

function render(snapshot) {
  renderNodes($('nodes'), snapshot.nodes, ctx);
  renderQueues($('queues'), snapshot.queues, ctx);
  renderRuntimes($('runtimes'), snapshot.runtimes);
  charts.add(snapshot.sample);
  jobs.setQueues(snapshot.queues.map((q) => q.queue));
  const status = $('status');
  if (snapshot.error !== undefined) {
    status.dataset.state = 'stale';
    status.textContent = `broker unreachable: ${snapshot.error}`;
  } else if (status.dataset.state !== 'reconnecting') {
    status.dataset.state = 'live';
    status.textContent = `live · sampled ${time(snapshot.at)} in ${snapshot.sampledInMs} ms`;
  }
}

async function start() {
  const { status, body } = await getJson('/api/overview');
  if (status !== 200) return put($('status'), body.error ?? `error ${status}`);
  ctx.readOnly = body.config.readOnly;
  document.body.classList.toggle('read-only', ctx.readOnly);
  $('broker').textContent = body.config.broker;
  $('mode').textContent = ctx.readOnly ? 'read-only' : '';
  charts.setHistory(body.history);
  if (body.snapshot) render(body.snapshot);
  $('job-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const id = $('job-id').value.trim();
    if (id !== '') ctx.show(id);
  });
  follow(
    (snapshot) => {
      render(snapshot);
      void jobs.refresh();
    },
    (state) => {
      $('status').dataset.state = state;
      if (state === 'reconnecting') $('status').textContent = 'reconnecting...';
    },
  );
}

void start();
