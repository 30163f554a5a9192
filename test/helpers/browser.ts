import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { ensureBuild } from './build.js';

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

/** Builds the dashboard into dist/web unless the last build is newer than every source (scripts/build-if-stale.mjs). */
export async function ensureWebBuild(): Promise<void> {
  await ensureBuild('web');
}
