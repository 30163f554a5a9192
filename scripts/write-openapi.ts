import fs from 'node:fs';
import path from 'node:path';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { widgetDocument } from '../src/http/openapi.js';

// Writes the OpenAPI document the server serves (generated from the route schemas) to a file,
// for `redocly lint` and for generating the typed test client.
const target = process.argv[2] ?? 'build/openapi.json';
const app = await buildApp({ ...loadConfig({ LOG_LEVEL: 'silent' }), database: { kind: 'sqlite', path: ':memory:' } });
await app.ready();
fs.mkdirSync(path.dirname(target), { recursive: true });
fs.writeFileSync(target, `${JSON.stringify(app.swagger(), null, 2)}\n`);
// The public chat endpoints' document, next to it (…/widget-openapi.json), linted the same way.
const widgetTarget = path.join(path.dirname(target), `widget-${path.basename(target)}`);
fs.writeFileSync(widgetTarget, `${JSON.stringify(widgetDocument(app), null, 2)}\n`);
await app.close();
console.error(`wrote ${target}`);
