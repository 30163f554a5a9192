import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// The dashboard is built into dist/web, which the service serves itself (src/dashboard/static.ts).
const root = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root,
  base: '/',
  plugins: [react()],
  build: { outDir: fileURLToPath(new URL('../dist/web', import.meta.url)), emptyOutDir: true, sourcemap: false },
  server: { proxy: { '/app/api': 'http://localhost:3000', '/docs': 'http://localhost:3000', '/widget.js': 'http://localhost:3000' } },
});
