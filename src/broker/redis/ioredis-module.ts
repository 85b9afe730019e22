import { createRequire } from 'node:module';
import type * as IORedis from 'ioredis';

const load = createRequire(import.meta.url);
let loaded: typeof IORedis | undefined;

/**
 * ioredis, loaded by the first Redis connection instead of by `import
 * 'prefork'`: a process that opens none (the Pool alone, a memory:// broker,
 * `defineTasks` in a task module) does not pay its ~13 MiB of heap nor its
 * load time. ioredis is CommonJS, so this is a plain synchronous require.
 */
export function ioredis(): typeof IORedis {
  return (loaded ??= load('ioredis') as typeof IORedis);
}
