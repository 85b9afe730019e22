/**
 * Compile-time checks of the typed API: `npm test` runs tsc on this file
 * (test/unit/typed-api.test.ts). Each `@ts-expect-error` is a call that must
 * NOT compile: if it ever does, tsc reports the unused directive and the test fails.
 */
import { Client, Pool, defineTasks, type JobHandle } from 'prefork';

export const tasks = defineTasks({
  add: (a: number, b: number) => a + b,
  greet: { run: (name: string, punctuation = '!') => Promise.resolve(`hello ${name}${punctuation}`), retries: 2 },
  tick: () => undefined,
});
type Tasks = typeof tasks;

export async function typedClient(): Promise<void> {
  const client = new Client<Tasks>({ broker: 'memory://types' });
  const sum = await client.enqueue('add', [1, 2], { queue: 'math' });
  const n: number = await sum.result({ timeout: '5s' });
  const greeting: string = await (await client.enqueue('greet', ['ada'])).result();
  await client.enqueue('greet', ['ada', '?']);
  await client.enqueue('tick');
  await client.enqueueMany([{ name: 'add', args: [1, 2] }, { name: 'tick' }, { name: 'greet', args: ['bo'] }]);
  const handle: JobHandle<number> = await client.enqueue('add', [3, 4]);

  // @ts-expect-error add takes numbers
  await client.enqueue('add', [1, 'x']);
  // @ts-expect-error add takes two arguments
  await client.enqueue('add', [1]);
  // @ts-expect-error add needs its arguments
  await client.enqueue('add');
  // @ts-expect-error no task of that name
  await client.enqueue('sub', [1, 2]);
  // @ts-expect-error greet resolves with a string
  const wrong: number = await (await client.enqueue('greet', ['ada'])).result();
  // @ts-expect-error an unknown enqueue option
  await client.enqueue('add', [1, 2], { queues: 'x' });
  // @ts-expect-error enqueueMany checks each item's arguments too
  await client.enqueueMany([{ name: 'add', args: ['1', 2] }]);
  // @ts-expect-error and each item's name
  await client.enqueueMany([{ name: 'sub', args: [1, 2] }]);

  const later = new Client().typed<Tasks>();
  const m: number = await (await later.enqueue('add', [5, 6])).result();
  // @ts-expect-error typed() checks as the constructor's type argument does
  await later.enqueue('add', ['5', 6]);
  void [n, greeting, handle, wrong, m];
}

export async function untypedClient(): Promise<void> {
  const client = new Client();
  const job = await client.enqueue('anything', [1, 'x', { deep: [true] }]);
  const value: unknown = await job.result();
  const count: number = await job.result<number>();
  await client.enqueue('no-args');
  // @ts-expect-error an untyped result is unknown until you say what it is
  const guess: number = await job.result();
  const elsewhere: string = await client.handle<string>('some-id').result();
  void [value, count, guess, elsewhere];
}

export async function typedPool(): Promise<void> {
  const pool = new Pool<Tasks>({ app: './tasks.js', processes: 1 });
  const n: number = await pool.apply('add', [1, 2]);
  const s: string = await pool.apply('greet', ['ada'], { timeLimit: '5s' });
  // @ts-expect-error add takes numbers
  await pool.apply('add', [1, 'x']);
  // @ts-expect-error no task of that name
  await pool.apply('sub', [1, 2]);

  const untyped = new Pool({ app: './tasks.js' });
  const t: number = await untyped.apply<number>('add', [1, 2]);
  const raw: unknown = await untyped.apply('add', new Uint8Array([0x92, 1, 2]));
  // @ts-expect-error an untyped pool's result is unknown until you say what it is
  const u: number = await untyped.apply('add', [1, 2]);
  void [n, s, t, raw, u];
}
