import setup from '../test/global-setup.js';

// Generates test/generated/api-v1.d.ts (the typed client's types) from the served OpenAPI document.
await setup();
console.error('wrote test/generated/api-v1.d.ts');
