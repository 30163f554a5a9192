#!/usr/bin/env node
/* global process, console, URL */
// Builds only what changed since the last successful build, so `npm start` takes seconds when nothing did.
// Plain JavaScript run by node itself: loading tsx would cost more than the check.
//
//   node scripts/build-if-stale.mjs          build the stale part(s): the server (tsc) and/or the dashboard (vite)
//   node scripts/build-if-stale.mjs --all    build both whatever the stamp says (`npm run build`, `npm install`)
//   node scripts/build-if-stale.mjs server   only the server, if stale (`npm run cli`: the CLI needs no dashboard)
//
// A part is stale when its output is missing, when it has no stamp, or when the newest modification time
// among its inputs (files and folders, so a deleted or renamed file counts too) is newer than the one
// recorded in its stamp. The stamp records the inputs' newest time as read *before* the build, so a file
// saved while the build runs makes the next start build again. widget/widget.js is not an input of either
// build: the server reads it from widget/ when it starts.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const STAMP = path.join(ROOT, 'dist', '.build-stamp.json');
const SHARED = ['package.json', 'package-lock.json', 'tsconfig.json'];
// tsc keeps what it knew of the last build here, so a rebuild after a small change checks only what it touches.
const TSBUILDINFO = 'dist/.tsbuildinfo';

const PARTS = {
  server: {
    inputs: ['src', 'tsconfig.build.json', ...SHARED],
    outputs: ['dist/server.js', 'dist/cli.js'],
    command: ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json', '--incremental', '--tsBuildInfoFile', TSBUILDINFO],
  },
  web: {
    inputs: ['web', ...SHARED],
    outputs: ['dist/web/index.html'],
    command: ['node_modules/vite/bin/vite.js', 'build', '--config', 'web/vite.config.ts', '--logLevel', 'warn'],
  },
};

/** The newest mtime (ms) of a file, or of a folder and everything under it; 0 when it does not exist. */
function newestMtime(target) {
  let stat;
  try {
    stat = fs.statSync(target);
  } catch {
    return 0;
  }
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const entry of fs.readdirSync(target, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'dist') continue;
    newest = Math.max(newest, newestMtime(path.join(target, entry.name)));
  }
  return newest;
}

function readStamp() {
  try {
    return JSON.parse(fs.readFileSync(STAMP, 'utf8'));
  } catch {
    return {};
  }
}

function run([script, ...args]) {
  return new Promise((resolve) => {
    // NODE_ENV=production whoever runs it (a test runner sets `test`): else Vite would bundle React's development build.
    const child = spawn(process.execPath, [path.join(ROOT, script), ...args], { cwd: ROOT, stdio: 'inherit', env: { ...process.env, NODE_ENV: 'production' } });
    child.once('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

const force = process.argv.includes('--all');
const only = process.argv.slice(2).filter((arg) => !arg.startsWith('--'));
const unknown = only.filter((name) => !(name in PARTS));
if (unknown.length > 0) {
  console.error(`unknown part(s): ${unknown.join(', ')} (known: ${Object.keys(PARTS).join(', ')})`);
  process.exit(2);
}
const stamp = readStamp();
const stale = Object.entries(PARTS)
  .filter(([name]) => only.length === 0 || only.includes(name))
  .map(([name, part]) => ({
    name,
    part,
    newest: Math.max(...part.inputs.map((input) => newestMtime(path.join(ROOT, input)))),
    missing: part.outputs.some((output) => !fs.existsSync(path.join(ROOT, output))),
  }))
  .filter(({ name, newest, missing }) => force || missing || newest > (stamp[name] ?? -1));

if (stale.length > 0) {
  if (!force) console.error(`building ${stale.map((s) => s.name).join(' and ')} (changed since the last build)…`);
  // tsc trusts its build info over the files: without the outputs it would not write them again.
  if (stale.some(({ name, missing }) => name === 'server' && (missing || force))) {
    fs.rmSync(path.join(ROOT, TSBUILDINFO), { force: true });
  }
  // Side by side: tsc and vite each keep one core busy.
  const codes = await Promise.all(stale.map(({ part }) => run(part.command)));
  const current = readStamp();
  stale.forEach(({ name, newest }, i) => {
    if (codes[i] === 0) current[name] = newest;
    else delete current[name];
  });
  fs.mkdirSync(path.dirname(STAMP), { recursive: true });
  fs.writeFileSync(STAMP, `${JSON.stringify(current, null, 2)}\n`);
  const failed = stale.filter((_, i) => codes[i] !== 0);
  if (failed.length > 0) {
    console.error(`build failed: ${failed.map((s) => s.name).join(', ')}`);
    process.exit(1);
  }
}
