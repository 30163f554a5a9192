import fs from 'node:fs';
import path from 'node:path';
import openapiTS, { astToString } from 'openapi-typescript';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';

// Generates the typed client's types from the document the server serves, so the client test proves
// the document matches the server.
export default async function setup(): Promise<void> {
  const app = await buildApp({ ...loadConfig({ LOG_LEVEL: 'silent' }), database: { kind: 'sqlite', path: ':memory:' } });
  await app.ready();
  const document = app.swagger();
  await app.close();
  const ast = await openapiTS(document as never);
  const target = path.resolve('test/generated/api-v1.d.ts');
  const types = astToString(ast);
  // Unchanged types are not written again: `npm test` runs two suites side by side, and one may be reading them.
  if (fs.existsSync(target) && fs.readFileSync(target, 'utf8') === types) return;
  fs.mkdirSync(path.dirname(target), { recursive: true });
  fs.writeFileSync(target, types);
}
