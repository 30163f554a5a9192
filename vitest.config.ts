import os from 'node:os';
import { defineConfig } from 'vitest/config';

// The multi-instance and fault suites need PostgreSQL and Redis: they belong to the PostgreSQL + Redis
// run (TEST_DATABASE_URL set), which `npm test` performs beside the SQLite run (scripts/test-all.ts).
const sharedServices = Boolean(process.env.TEST_DATABASE_URL);

// On SQLite alone, one test file per core (`npm test` gives it one fewer, the other run takes the last). Every SQLite file has its own database files, ports and temp folders. The
// PostgreSQL + Redis run stays one file at a time: side by side, files share Redis's per-IP sign-up
// budgets (429s) and one file's DDL can break another's migrator, which reads every schema's tables.
const maxWorkers = sharedServices ? 1 : Math.max(2, os.availableParallelism());

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The browser suites drive the dashboard and the widget, whose behaviour does not depend on the database
    // (the API suites cover both): they run once, in the SQLite run, which is the shorter of the two.
    exclude: sharedServices ? ['**/node_modules/**', 'test/browser/**'] : ['**/node_modules/**', 'test/multi-instance/**'],
    pool: 'forks',
    maxWorkers,
    // A worker imports the app's modules once for all its files instead of once per file: the imports took
    // ≈ 270 s of each run (4 s a file), the tests themselves share nothing but those modules (every file
    // builds its own app on its own database). Measured on test/api + test/guarantees on PostgreSQL:
    // 448 s isolated, 311 s not. A test must therefore not mock a module (vi.mock): pass a dependency instead.
    isolate: false,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    globalSetup: ['test/global-setup.ts', 'test/helpers/global-fixtures.ts'],
  },
});
