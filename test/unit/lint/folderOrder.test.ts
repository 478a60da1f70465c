// The folder order of core/ (eslint.config.js's CORE_TIERS, README "Layout")
// is enforced by the lint that `npm test` runs: a backward import is refused,
// a forward one passes, and the named exceptions hold only for their file.
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const eslint = new ESLint({ cwd: ROOT });

/** The no-restricted-imports messages for `source` as if it were the file at `path`. */
async function refusals(path: string, source: string): Promise<string[]> {
  const [result] = await eslint.lintText(source, { filePath: `${ROOT}${path}` });
  return result.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

describe('core folder order', () => {
  it.each([
    ['core/platform/x.ts', "import { createMemoryManager } from '../memory/memoryManager.js';"],
    ['core/cluster/x.ts', "import { table } from '../cli/format.js';"],
    ['core/history/x.ts', "import { listenSocket } from '../server/socketServer.js';"],
    ['core/server/x.ts', "import { nodeName } from '../cluster/x.js';"],
    ['core/memory/x.ts', "import { SalusService } from '../service/service.js';"],
    ['core/protocol/x.ts', "import { parseSize } from '../platform/size.js';"],
    ['core/client/remote/x.ts', "import { Session } from '../../executor/session.js';"],
    ['core/client/x.ts', "import { Session } from '../executor/session.js';"],
    ['core/executor/x.ts', "import { ServiceConnection } from '../client/connection.js';"],
  ])('refuses a backward import in %s', async (path, source) => {
    const messages = await refusals(path, source);
    expect(messages.length, source).toBe(1);
    expect(messages[0]).toMatch(/may import only/);
  });

  it.each([
    ['core/service/x.ts', "import { Session } from '../executor/session.js';"],
    ['core/cli/x.ts', "import { SalusService } from '../service/service.js';"],
    ['core/cluster/x.ts', "import { ServiceConnection } from '../client/connection.js';"],
    ['core/memory/x.ts', "import { parseSize } from '../platform/size.js';"],
    ['core/client/remote/x.ts', "import { PROTOCOL_VERSION } from '../../protocol/messages.js';"],
    ['core/client/adapters/x.ts', "import { install } from '../remote/install.js';"],
  ])('takes a forward import in %s', async (path, source) => {
    expect(await refusals(path, source)).toEqual([]);
  });

  it('lets the job side (client) reach the webgpu loader in platform, and not the executor', async () => {
    expect(await refusals('core/client/localRun.ts', "import { localNavigatorGpu } from '../platform/gpu.js';")).toEqual([]);
    expect(await refusals('core/client/localRun.ts', "import { Session } from '../executor/session.js';")).toHaveLength(1);
  });

  it('keeps webgpu to platform/gpu.ts, and electron out of core', async () => {
    expect(await refusals('core/platform/gpu.ts', "import { create } from 'webgpu';")).toEqual([]);
    expect(await refusals('core/platform/gpu.ts', "import { Session } from '../executor/session.js';")).toHaveLength(1);
    expect(await refusals('core/executor/replay.ts', "import { create } from 'webgpu';")).toHaveLength(1);
    expect(await refusals('core/service/x.ts', "import { app } from 'electron';")).toHaveLength(1);
    expect(await refusals('core/protocol/x.ts', "import { readFileSync } from 'node:fs';")).toHaveLength(1);
  });
});
