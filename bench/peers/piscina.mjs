// piscina (worker threads) behind the bench's pool adapter:
// open({ processes }) → { call(name, x) → Promise, close(), tally() }.
// minThreads = maxThreads = processes, so the pool does not grow or shrink
// during a run; tasks are the named exports of piscina-tasks.mjs.
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';

const filename = fileURLToPath(new URL('./piscina-tasks.mjs', import.meta.url));

export async function open({ processes }) {
  const pool = new Piscina({ filename, minThreads: processes, maxThreads: processes });
  return {
    call: (name, x) => pool.run(x, { name }),
    close: () => pool.destroy(),
    tally: () => undefined,
    pids: () => [],
  };
}
