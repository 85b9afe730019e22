// workerpool with workerType: 'process' (child processes over Node's IPC
// channel) behind the bench's pool adapter:
// open({ processes }) → { call(name, x) → Promise, close(), tally() }.
// minWorkers = maxWorkers = processes; tasks registered by workerpool-tasks.mjs.
import { fileURLToPath } from 'node:url';
import workerpool from 'workerpool';

const script = fileURLToPath(new URL('./workerpool-tasks.mjs', import.meta.url));

export async function open({ processes }) {
  const pool = workerpool.pool(script, { workerType: 'process', minWorkers: processes, maxWorkers: processes });
  return {
    call: (name, x) => pool.exec(name, [x]),
    close: () => pool.terminate(),
    tally: () => undefined,
    pids: () => [],
  };
}
