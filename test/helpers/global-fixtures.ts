import { ensureWebBuild } from './browser.js';

// Vitest's second global setup, beside test/global-setup.ts (which `npm run typecheck` also runs to write the
// client types): the dashboard is built once per run, before browser suites running side by side
// (vitest.config.ts: one file per core on SQLite) could each start a build into the same dist/web.
export default async function setup(): Promise<void> {
  await ensureWebBuild();
}
