import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Integration tests share one software GPU and spawn processes; 2 cores.
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    env: { XDG_RUNTIME_DIR: process.env.XDG_RUNTIME_DIR ?? '/tmp/salus-test-xdg' },
  },
});
