// The CPU-bound job of every CPU benchmark: one busy loop, the same code in
// prefork's task module, the peers' workers and the bare reference. run.js
// calibrates the iteration count ONCE per run (to ~2 ms on this machine) and
// passes that same count to everybody.

/** Burns CPU for `n` iterations; returns a deterministic checksum (so the loop cannot be elided and results can be checked). */
export function spin(n) {
  let x = 0;
  for (let i = 0; i < n; i++) x = (x + i * i) % 1000003;
  return x;
}

/**
 * Finds the iteration count for which spin() takes `targetMs` (median of
 * repeated timings after a warm-up). Returns { iterations, msPerJob }.
 */
export function calibrate(targetMs = 2) {
  const time = (n, reps) => {
    const samples = [];
    for (let r = 0; r < reps; r++) {
      const t = performance.now();
      spin(n);
      samples.push(performance.now() - t);
    }
    samples.sort((a, b) => a - b);
    return samples[samples.length >> 1];
  };
  let n = 100_000;
  for (let i = 0; i < 200; i++) spin(n); // warm-up: let the JIT settle on the loop
  for (let round = 0; round < 6; round++) {
    const ms = time(n, 25);
    n = Math.max(1000, Math.round((n * targetMs) / ms));
  }
  return { iterations: n, msPerJob: time(n, 101) };
}
