import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['packages/*/src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    setupFiles: ['test/harness/setup.ts'],
    // One PostgreSQL for the whole run (DATABASE_URL, or an embedded one): test/harness/postgres.ts.
    globalSetup: ['test/harness/postgres-global-setup.ts', 'test/harness/agent-clis-global-setup.ts'],
    reporters: ['default'],
  },
});
