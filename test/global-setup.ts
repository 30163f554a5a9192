import fs from 'node:fs';
import path from 'node:path';
import openapiTS, { astToString } from 'openapi-typescript';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';

/** Where the /api/v1 types go: the typed client's test, and the dashboard (which derives its API shapes from them). */
export const GENERATED_TYPES = ['test/generated/api-v1.d.ts', 'web/src/generated/api-v1.d.ts'];

// Generates the typed client's types from the document the server serves, so the client test proves
// the document matches the server and the dashboard cannot drift from it.
export default async function setup(): Promise<void> {
  const app = await buildApp({ ...loadConfig({ LOG_LEVEL: 'silent' }), database: { kind: 'sqlite', path: ':memory:' } });
  await app.ready();
  const document = app.swagger();
  await app.close();
  const types = astToString(await openapiTS(document as never));
  for (const file of GENERATED_TYPES) {
    const target = path.resolve(file);
    // Unchanged types are not written again: `npm test` runs two suites side by side, and one may be reading them.
    if (fs.existsSync(target) && fs.readFileSync(target, 'utf8') === types) continue;
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, types);
  }
}
