import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

// SwiftShader wants a writable runtime folder and the tests put private sockets in it:
// `npm test` makes one when the machine has none.
const runtimeDir = process.env.XDG_RUNTIME_DIR ?? join(tmpdir(), `salus-test-xdg-${process.getuid?.() ?? 'user'}`);
mkdirSync(runtimeDir, { recursive: true, mode: 0o700 });

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Integration tests share one software GPU and spawn processes; 2 cores.
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // A service started without --data-dir keeps its job history here, not in the user's own; and
    // the user's settings file (core/platform/settingsFile.ts) does not change what tests' services do.
    env: {
      XDG_RUNTIME_DIR: runtimeDir,
      XDG_DATA_HOME: join(tmpdir(), `salus-test-data-${process.getuid?.() ?? 'user'}`),
      SALUS_CONFIG: join(runtimeDir, `no-settings-${process.pid}.json`),
    },
  },
});
