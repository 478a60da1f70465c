// Lint: typescript-eslint's recommended rules, plus import fences that keep
// dependencies pointing one way (DESIGN.md, "Layout and dependency direction").
import tseslint from 'typescript-eslint';

const nodeOnly = ['node:*', 'fs', 'path', 'net', 'child_process', 'os'];

/**
 * The order of core/'s folders (README, "Layout"): a folder may import the
 * folders of earlier tiers, never those of its own tier or later ones, so a
 * backward import fails `npm run lint` (test/unit/lint/folderOrder.test.ts
 * proves it).
 */
export const CORE_TIERS = [
  ['protocol'],
  ['platform'],
  ['memory', 'scheduler'],
  ['executor', 'sim', 'client'],
  ['service'],
  ['server', 'bridge', 'history', 'cluster'],
  ['cli'],
];

const ELECTRON_AND_UI = ['electron', 'react', 'react-dom', 'zustand'];
const WEBGPU = { name: 'webgpu', message: 'Only core/platform/gpu.ts loads the webgpu package.' };
const ABOVE_CORE = { group: ['**/renderer/**', '**/electron/**'], message: 'core/ knows nothing above it.' };

/** The `no-restricted-imports` options of one core folder (`allowWebgpu`: for the one file that loads it). */
function coreImportRule(folder, { allowWebgpu = false } = {}) {
  const tier = CORE_TIERS.findIndex((names) => names.includes(folder));
  const later = CORE_TIERS.slice(tier).flat().filter((name) => name !== folder);
  const patterns = [ABOVE_CORE];
  if (later.length > 0) {
    // Matches `../later/…` (any depth of `../`).
    patterns.push({
      regex: `^(\\.\\./)+(${later.join('|')})/`,
      message: `core/${folder} may import only ${CORE_TIERS.slice(0, tier).flat().join(', ') || 'nothing else of ours'} (folder order: README, "Layout").`,
    });
  }
  if (folder === 'protocol') patterns.push({ group: nodeOnly, message: 'core/protocol is portable: the renderer imports it.' });
  return ['error', { paths: allowWebgpu ? ELECTRON_AND_UI : [...ELECTRON_AND_UI, WEBGPU], patterns }];
}

/** One lint block per core folder, and one for the file that loads webgpu. */
function coreFolderRules() {
  const blocks = [];
  for (const folder of CORE_TIERS.flat()) {
    blocks.push({ files: [`core/${folder}/**/*.ts`], rules: { 'no-restricted-imports': coreImportRule(folder) } });
  }
  // Only platform's gpu module may load the native WebGPU binding.
  blocks.push({ files: ['core/platform/gpu.ts'], rules: { 'no-restricted-imports': coreImportRule('platform', { allowWebgpu: true }) } });
  return blocks;
}

export default tseslint.config(
  { ignores: ['dist/**', 'out/**', 'node_modules/**', 'renderer/dist/**', 'bench/results/**'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  ...coreFolderRules(),
  {
    // The renderer runs in a web page and sees core/protocol only (SalusApi and state types).
    files: ['renderer/src/**/*.{ts,tsx}'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: ['electron', 'webgpu', 'ws', 'systeminformation'],
        patterns: [
          { group: nodeOnly, message: 'The renderer runs in a web page: no Node modules.' },
          { regex: '(^|/)(core/(?!protocol/)|electron/)', message: 'The renderer sees core/protocol only (SalusApi and state types).' },
        ],
      }],
    },
  },
  {
    // The main process and preload know core/ and Electron, never the renderer's code.
    files: ['electron/**/*.{ts,cts}'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: ['react', 'react-dom', 'zustand'],
        patterns: [{ group: ['**/renderer/**'], message: 'electron/ talks to the renderer through SalusApi and IPC only.' }],
      }],
    },
  },
);
