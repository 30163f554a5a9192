import fs from 'node:fs';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { chromium, type Browser } from 'playwright-core';

const run = promisify(execFile);

const ROOT = new URL('../../', import.meta.url).pathname;

/** Where the browser suites save their screenshots (gitignored). */
export const SCREENSHOTS = path.join(ROOT, 'test-artifacts', 'screenshots');

/** The chromium binary: CHROMIUM_PATH, or Debian's. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** True when chromium is there; under CI=true its absence is a failure, not a skip. */
export function chromiumAvailable(): boolean {
  if (fs.existsSync(CHROMIUM)) return true;
  if (process.env.CI === 'true') throw new Error(`chromium is missing at ${CHROMIUM}: the browser suites cannot run (install it, or set CHROMIUM_PATH)`);
  console.warn(`[browser tests] skipped: no chromium at ${CHROMIUM} (set CHROMIUM_PATH)`);
  return false;
}

/** Launches headless chromium with the flags that keep it quiet and offline. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(full) : fs.statSync(full).mtimeMs);
  }
  return newest;
}

/** Builds the dashboard into dist/web unless a build newer than every source file is there already. */
export async function ensureWebBuild(): Promise<void> {
  const index = path.join(ROOT, 'dist', 'web', 'index.html');
  const sources = Math.max(newestMtime(path.join(ROOT, 'web', 'src')), fs.statSync(path.join(ROOT, 'web', 'index.html')).mtimeMs);
  if (fs.existsSync(index) && fs.statSync(index).mtimeMs >= sources) return;
  // A child process with NODE_ENV=production: inside vitest (NODE_ENV=test) Vite would bundle React's development build.
  await run(process.execPath, [path.join(ROOT, 'node_modules', 'vite', 'bin', 'vite.js'), 'build', '--config', path.join(ROOT, 'web', 'vite.config.ts'), '--logLevel', 'warn'], {
    cwd: ROOT,
    env: { ...process.env, NODE_ENV: 'production' },
  });
}
