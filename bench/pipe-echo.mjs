// A1 reference — the transport alone: a bare framed-pipe echo, no pool.
// Measures: jobs/s of `jobs` frames ([seq, x] in msgpack, 4-byte big-endian
// length) written from this process to `processes` plain Node children over
// their stdin, round-robin in batches of `batch` frames per write (waiting
// for 'drain' on backpressure), each child echoing [seq, x] back on stdout in
// one write per chunk read. It is the ceiling a pool on stdin/stdout pipes can
// approach (issue 2 quotes ~270,000/s here).
// Knobs ($BENCH_PARAMS): processes (2), jobs (200,000), batch (256), warmup (2,000).
// Clock: from the first write to the last answer decoded. Check: count and the
// sum of the echoed x.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { pack, unpack } from 'msgpackr';
import { params, report } from './lib/child.mjs';

const { processes = 2, jobs, batch = 256, warmup = 2000 } = params();
const script = fileURLToPath(new URL('./fixtures/pipe-echo-child.mjs', import.meta.url));
const children = Array.from({ length: processes }, () =>
  spawn(process.execPath, [script], { stdio: ['pipe', 'pipe', 'inherit'] }),
);

let onAnswer = () => {};
for (const child of children) {
  let pending = Buffer.alloc(0);
  child.stdout.on('data', (chunk) => {
    const buf = pending.length ? Buffer.concat([pending, chunk]) : chunk;
    let off = 0;
    while (off + 4 <= buf.length) {
      const len = buf.readUInt32BE(off);
      if (off + 4 + len > buf.length) break;
      onAnswer(unpack(buf.subarray(off + 4, off + 4 + len)));
      off += 4 + len;
    }
    pending = buf.subarray(off);
  });
}

function frame(seq, x) {
  const body = pack([seq, x]);
  const head = Buffer.allocUnsafe(4);
  head.writeUInt32BE(body.length);
  return [head, body];
}

async function echo(n) {
  let count = 0;
  let sum = 0;
  const done = new Promise((resolve) => {
    onAnswer = ([, x]) => {
      sum += x;
      if (++count === n) resolve();
    };
  });
  const t0 = performance.now();
  for (let i = 0, k = 0; i < n; k++) {
    const parts = [];
    const end = Math.min(n, i + batch);
    for (; i < end;) parts.push(...frame(i, i++));
    const child = children[k % processes];
    if (!child.stdin.write(Buffer.concat(parts))) await new Promise((r) => child.stdin.once('drain', r));
  }
  await done;
  return { ms: performance.now() - t0, count, sum };
}

await echo(warmup);
const { ms, count, sum } = await echo(jobs);
for (const c of children) c.kill();
const expected = (jobs * (jobs - 1)) / 2;
report({
  jobsPerSec: (count / ms) * 1000,
  ms,
  count,
  ok: count === jobs && sum === expected,
  check: `count ${count}/${jobs}, sum ${sum === expected ? 'right' : 'WRONG'}`,
});
