import { ensureBuild } from './build.js';

// Vitest's second global setup, beside test/global-setup.ts (which `npm run typecheck` also runs to write the
// client types): the server and the dashboard are built once per run when their sources changed, before suites
// running side by side (vitest.config.ts: one file per core on SQLite) could each start a build into dist/.
export default async function setup(): Promise<void> {
  await ensureBuild('server', 'web');
}
