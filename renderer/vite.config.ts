// Builds the renderer (renderer/index.html) into dist/renderer. Relative asset
// URLs (base './') let the same build load from Electron's packaged files or a
// custom protocol, and from `salus serve --http` at `/`.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

const root = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root,
  base: './',
  plugins: [react()],
  build: {
    outDir: fileURLToPath(new URL('../dist/renderer', import.meta.url)),
    emptyOutDir: true,
    sourcemap: true,
    target: 'es2022',
  },
  server: { fs: { allow: [fileURLToPath(new URL('..', import.meta.url))] } },
});
