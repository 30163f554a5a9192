import setup, { GENERATED_TYPES } from '../test/global-setup.js';

// Generates the /api/v1 types (the typed client's and the dashboard's) from the served OpenAPI document.
await setup();
console.error(`wrote ${GENERATED_TYPES.join(', ')}`);
