import { createInterface } from 'node:readline';
import { load, type LoadSpec } from './load.js';

// A load run in its own process (see `loadInOwnProcess`): started with the spec as its argument, it says
// "ready" on stdout, runs when a line arrives on stdin, and prints the result as one line of JSON.
const { spec, connections, seconds } = JSON.parse(process.argv[2]!) as { spec: LoadSpec; connections: number; seconds: number };
const lines = createInterface({ input: process.stdin });
process.stdout.write('ready\n');
for await (const _line of lines) {
  process.stdout.write(`${JSON.stringify(await load(spec, connections, seconds))}\n`);
  break;
}
lines.close();
