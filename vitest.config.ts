import { defineConfig } from 'vitest/config';

// The multi-instance and fault suites need PostgreSQL and Redis: they belong to the PostgreSQL + Redis
// run (TEST_DATABASE_URL set), which `npm test` performs after the SQLite run.
const sharedServices = Boolean(process.env.TEST_DATABASE_URL);

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: sharedServices ? ['**/node_modules/**'] : ['**/node_modules/**', 'test/multi-instance/**'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    globalSetup: ['test/global-setup.ts'],
  },
});
