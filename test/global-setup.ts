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
  fs.mkdirSync(path.dirname(target), { recursive: true });
  fs.writeFileSync(target, astToString(ast));
}
