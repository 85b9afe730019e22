// The two charts (uPlot, served prebuilt from its package): each queue's
// waiting jobs over time, and throughput with the failure rate. The points
// are the samples the dashboard keeps in memory; each new one is appended.

const WINDOW = 300;
// As many as each sample holds (CHART_QUEUES in history.ts): the first by name.
const MAX_QUEUES = 20;
const COLORS = ['#2563eb', '#16a34a', '#d97706', '#9333ea', '#dc2626', '#0891b2', '#4b5563', '#db2777'];

export class Charts {
  constructor(depthEl, rateEl) {
    this.depthEl = depthEl;
    this.rateEl = rateEl;
    this.samples = [];
    this.queues = [];
    this.depth = undefined;
    this.rate = undefined;
    window.addEventListener('resize', () => this.resize());
  }

  setHistory(samples) {
    this.samples = samples.slice(-WINDOW);
    this.draw();
  }

  add(sample) {
    const last = this.samples.at(-1);
    if (last !== undefined && last.at >= sample.at) return;
    this.samples.push(sample);
    if (this.samples.length > WINDOW) this.samples.shift();
    this.draw();
  }

  draw() {
    if (typeof uPlot === 'undefined') return;
    const queues = [...new Set(this.samples.flatMap((s) => s.queues.map((q) => q.queue)))].sort().slice(0, MAX_QUEUES);
    const xs = this.samples.map((s) => s.at / 1000);
    const depthData = [
      xs,
      ...queues.map((name) => this.samples.map((s) => s.queues.find((q) => q.queue === name)?.waiting ?? null)),
    ];
    const rateData = [
      xs,
      this.samples.map((s) => s.succeeded),
      this.samples.map((s) => s.failed),
      this.samples.map((s) => s.failureRate * 100),
    ];
    if (this.depth === undefined || queues.join('\n') !== this.queues.join('\n')) {
      this.queues = queues;
      this.depth?.destroy();
      this.depth = new uPlot(
        {
          ...this.size(this.depthEl),
          series: [{}, ...queues.map((name, i) => ({ label: name, stroke: COLORS[i % COLORS.length], width: 2 }))],
          axes: [{}, { label: 'jobs' }],
        },
        depthData,
        this.depthEl,
      );
    } else this.depth.setData(depthData);
    if (this.rate === undefined) {
      this.rate = new uPlot(
        {
          ...this.size(this.rateEl),
          series: [
            {},
            { label: 'succeeded/s', stroke: '#16a34a', width: 2 },
            { label: 'failed/s', stroke: '#dc2626', width: 2 },
            { label: 'failure %', stroke: '#d97706', dash: [6, 4], scale: '%' },
          ],
          axes: [{}, { label: 'jobs/s' }, { side: 1, scale: '%', label: '%', grid: { show: false } }],
          scales: { '%': { range: [0, 100] } },
        },
        rateData,
        this.rateEl,
      );
    } else this.rate.setData(rateData);
  }

  size(el) {
    return { width: Math.max(el.clientWidth, 300), height: 220 };
  }

  resize() {
    this.depth?.setSize(this.size(this.depthEl));
    this.rate?.setSize(this.size(this.rateEl));
  }
}
