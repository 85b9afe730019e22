import { defineConfig } from 'vitest/config';

// Tests run against the compiled package (`npm test` builds first): children
// are spawned from dist/child/main.js, and fixtures import 'prefork' itself.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/setup/redis-server.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
