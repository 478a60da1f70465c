/**
 * Framework adapters: a job's framework pools its GPU buffers, and only the
 * framework knows when a pooled buffer's contents are dead. Each adapter finds
 * its framework in the job's process without importing it and reports those
 * moments as `discard` commands (core/executor/discard.ts), so the service sees
 * a job's true persistent memory and lends the rest through lanes (TF.js:
 * tfjs.ts); or they turn the framework's own caches off (ONNX Runtime Web:
 * ort.ts). Installed by
 * `salus run` unless `--no-adapters` (env SALUS_ADAPTERS=off).
 */
import { register } from 'node:module';
import { RemoteBuffer } from '../remote/buffer.js';
import { installTfjsAdapter } from './tfjs.js';

/** The environment variable that turns the adapters off (`off`). */
export const ADAPTERS_ENV = 'SALUS_ADAPTERS';

/** Discards a buffer of the remote GPU; false for anything else (a local device's buffer). */
function discardContents(buffer: GPUBuffer): boolean {
  return buffer instanceof RemoteBuffer && RemoteBuffer.discardContents(buffer);
}

/** Installs every adapter, unless the environment turns them off. */
export function installFrameworkAdapters(env: NodeJS.ProcessEnv = process.env): void {
  if (env[ADAPTERS_ENV] === 'off') return;
  installTfjsAdapter(discardContents);
  // ONNX Runtime Web: its sessions are adapted as the job imports it (ort.ts, ortLoader.ts).
  register('./ortLoader.js', import.meta.url);
}
