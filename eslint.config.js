// Lint: typescript-eslint's recommended rules, plus import fences that keep
// dependencies pointing one way (DESIGN.md, "Layout and dependency direction").
import tseslint from 'typescript-eslint';

const nodeOnly = ['node:*', 'fs', 'path', 'net', 'child_process', 'os'];

export default tseslint.config(
  { ignores: ['dist/**', 'out/**', 'node_modules/**', 'renderer/dist/**', 'bench/results/**'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  {
    files: ['core/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: ['electron', 'react', 'react-dom', 'zustand'],
        patterns: [{ group: ['**/renderer/**', '**/electron/**'], message: 'core/ knows nothing above it.' }],
      }],
    },
  },
  {
    // Only the executor's gpu module may load the native WebGPU binding.
    files: ['core/**/*.ts'],
    ignores: ['core/executor/gpu.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: ['electron', 'react', 'react-dom', 'zustand', { name: 'webgpu', message: 'Only core/executor/gpu.ts loads the webgpu package.' }],
        patterns: [{ group: ['**/renderer/**', '**/electron/**'], message: 'core/ knows nothing above it.' }],
      }],
    },
  },
  {
    files: ['core/protocol/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: ['webgpu', 'electron', 'react'],
        patterns: [{ group: nodeOnly, message: 'core/protocol is portable: the renderer imports it.' }, { group: ['../*'], message: 'core/protocol depends on nothing else of ours.' }],
      }],
    },
  },
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
