// Config for the panel performance measurement, kept out of `npm test` (the main
// config takes only *.test.ts): npx vitest run --config test/e2e/perf/vitest.config.ts
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    root: new URL('../../..', import.meta.url).pathname,
    include: ['test/e2e/perf/*.perf.ts'],
    testTimeout: 120_000,
    hookTimeout: 60_000,
    env: { XDG_RUNTIME_DIR: process.env.XDG_RUNTIME_DIR ?? '/tmp/salus-test-xdg' },
  },
});
