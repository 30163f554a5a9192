import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = new URL('../../', import.meta.url).pathname;

/**
 * Builds what changed since the last build (scripts/build-if-stale.mjs, as `npm start` does): the server into
 * dist/ (the suites start the built server and CLI, the code `npm start` runs) and the dashboard into dist/web.
 */
export async function ensureBuild(...parts: ('server' | 'web')[]): Promise<void> {
  await run(process.execPath, [`${ROOT}scripts/build-if-stale.mjs`, ...parts], { cwd: ROOT });
}
