/**
 * `salus run --local`: runs a job script on a WebGPU device of this process
 * instead of the service's remote GPU. The job sees the same environment as
 * under `salus run` — `navigator.gpu`, the `GPUBufferUsage`-style globals and
 * its own arguments in `process.argv` — so a job proven here runs there
 * unchanged.
 *
 * Usage: `node dist/core/client/localRun.js FILE [--] [ARGS...]`
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { installWebGpuGlobals, localNavigatorGpu, type GpuOptions } from '../platform/gpu.js';

/**
 * Makes this process look like a browser with WebGPU: the WebGPU globals and
 * `navigator.gpu`. Must run before any job module is imported, because
 * libraries such as TF.js's WebGPU backend probe `navigator.gpu` once, at
 * import time, and register nothing when it is missing.
 */
export async function installLocalNavigator(options: GpuOptions = {}): Promise<GPU> {
  installWebGpuGlobals();
  copySharedWriteBufferData(globalThis.GPUQueue.prototype);
  const gpu = await localNavigatorGpu(options);
  // Node 20 has no `navigator`; Node 21+ has one, without `gpu`, defined as an
  // accessor on globalThis, so define rather than assign.
  Object.defineProperty(globalThis, 'navigator', { value: { gpu }, configurable: true, writable: true });
  return gpu;
}

/** `data` itself when no SharedArrayBuffer is behind it, else a copy of the same kind and length that owns its memory. */
function unshared(data: unknown): unknown {
  // A typed array's slice() allocates a plain ArrayBuffer; SharedArrayBuffer's own slice() would not.
  if (data instanceof SharedArrayBuffer) return new Uint8Array(data).slice().buffer;
  if (!ArrayBuffer.isView(data) || !(data.buffer instanceof SharedArrayBuffer)) return data;
  const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength).slice();
  if (data instanceof DataView) return new DataView(bytes.buffer);
  const TypedArray = data.constructor as new (buffer: ArrayBuffer) => ArrayBufferView;
  return new TypedArray(bytes.buffer);
}

/**
 * WebGPU's `queue.writeBuffer` takes `[AllowShared]` data, and browsers accept
 * a view of a SharedArrayBuffer; dawn.node rejects one ("Invalid argument") or,
 * at an offset, crashes. Libraries built with wasm threads upload straight from
 * their heap, which is shared (ONNX Runtime Web does, on every upload), so a
 * local device copies such data first, as the remote GPU does for all data.
 * The whole view is copied, so dataOffset and size keep their meaning.
 */
export function copySharedWriteBufferData(queuePrototype: GPUQueue): void {
  const original = queuePrototype.writeBuffer as (this: GPUQueue, ...args: unknown[]) => undefined;
  if ((original as { copiesShared?: boolean }).copiesShared) return;
  const writeBuffer = function (this: GPUQueue, buffer: GPUBuffer, bufferOffset: number, data: unknown, ...rest: unknown[]) {
    return original.call(this, buffer, bufferOffset, unshared(data), ...rest);
  };
  Object.defineProperty(writeBuffer, 'copiesShared', { value: true });
  Object.defineProperty(queuePrototype, 'writeBuffer', { value: writeBuffer, configurable: true, writable: true });
}

/**
 * Runs the ES module FILE as a job on a local device: sets up the browser-like
 * globals, sets `process.argv` to `[node, FILE, ...args]` and imports FILE.
 * Resolves when the module's top-level code (including top-level await) has
 * finished; rejects with whatever the job threw.
 */
export async function runLocal(file: string, args: readonly string[] = [], options: GpuOptions = {}): Promise<void> {
  const path = resolve(file);
  await installLocalNavigator(options);
  process.argv = [process.argv[0], path, ...args];
  await import(pathToFileURL(path).href);
}

function isMain(): boolean {
  return process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href;
}

if (isMain()) {
  const [file, ...rest] = process.argv.slice(2);
  if (!file) {
    console.error('usage: node localRun.js FILE [--] [ARGS...]');
    process.exit(2);
  }
  runLocal(file, rest[0] === '--' ? rest.slice(1) : rest).catch((error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : error);
    process.exitCode = 1;
  });
}
