import os from 'node:os';
import { defineConfig } from 'vitest/config';

// The multi-instance and fault suites need PostgreSQL and Redis: they belong to the PostgreSQL + Redis
// run (TEST_DATABASE_URL set), which `npm test` performs after the SQLite run.
const sharedServices = Boolean(process.env.TEST_DATABASE_URL);

// On SQLite, one test file per core. Vitest's default in a run is one worker fewer than the cores: on a
// two-core CI machine that runs the files one after the other and leaves a core idle (the SQLite run used
// 451 s of CPU in 455 s). Every SQLite file has its own database files, ports and temp folders. The
// PostgreSQL + Redis run stays one file at a time: side by side, files share Redis's per-IP sign-up
// budgets (429s) and one file's DDL can break another's migrator, which reads every schema's tables.
const maxWorkers = sharedServices ? 1 : Math.max(2, os.availableParallelism());

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: sharedServices ? ['**/node_modules/**'] : ['**/node_modules/**', 'test/multi-instance/**'],
    pool: 'forks',
    maxWorkers,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    globalSetup: ['test/global-setup.ts', 'test/helpers/global-fixtures.ts'],
  },
});
