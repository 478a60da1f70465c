// Config for the docs/ screenshot script, kept out of `npm test` (the main
// config takes only *.test.ts): npx vitest run --config test/e2e/screenshots/vitest.config.ts
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    root: new URL('../../..', import.meta.url).pathname,
    include: ['test/e2e/screenshots/*.shots.ts'],
    testTimeout: 240_000,
    hookTimeout: 60_000,
    env: { XDG_RUNTIME_DIR: process.env.XDG_RUNTIME_DIR ?? '/tmp/salus-test-xdg' },
  },
});
