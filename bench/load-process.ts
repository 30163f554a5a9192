import { createInterface } from 'node:readline';
import { load, type LoadSpec } from './load.js';

// A load generator in its own process (see `startLoadProcess`): it says "ready" on stdout, then runs each
// load that arrives on stdin as one line of JSON ({spec, connections, seconds}) and prints its result as one
// line of JSON, until stdin closes.
const lines = createInterface({ input: process.stdin });
process.stdout.write('ready\n');
for await (const line of lines) {
  const { spec, connections, seconds } = JSON.parse(line) as { spec: LoadSpec; connections: number; seconds: number };
  process.stdout.write(`${JSON.stringify(await load(spec, connections, seconds))}\n`);
}
