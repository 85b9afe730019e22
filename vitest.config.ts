import { defineConfig } from 'vitest/config';

// Tests run against the compiled package (`npm test` builds first): children
// are spawned from dist/child/main.js, and fixtures import 'prefork' itself.
// test/setup/dist-fresh.ts stops a run whose dist/ is older than src/.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/setup/dist-fresh.ts', 'test/setup/redis-server.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // expect.poll and vi.waitFor bound a hang, not a speed: generous, under the test timeout.
    expect: { poll: { timeout: 20_000, interval: 20 } },
  },
});
