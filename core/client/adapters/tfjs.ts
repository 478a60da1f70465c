/**
 * TensorFlow.js's WebGPU backend (tfjs-backend-webgpu 4.x; tested with 4.22.0).
 * Its BufferManager never destroys a released buffer: `releaseBuffer` files it
 * in a free list keyed by size and usage, and `acquireBuffer` hands it out
 * again for a later tensor, which overwrites it. So once `releaseBuffer` has
 * put a buffer in the free list, its contents are dead: the adapter tells the
 * service (`discard`), which lends the memory to others until the buffer's next
 * use. Nothing of TF.js is imported: tfjs-core keeps its engine on the global
 * object (`_tfengine`, whichever copy of tfjs-core the job loaded), and every
 * backend it registers passes through `engine.registry`; a backend with a
 * BufferManager of the known shape gets its `releaseBuffer` wrapped. Any other
 * shape (another TF.js version) is left alone, so the job runs as before, with
 * its pool counted as model state.
 */

/** Says the service may take back a buffer's memory; false where it does not apply. */
export type DiscardContents = (buffer: GPUBuffer) => boolean;

/** The part of TF.js's BufferManager the adapter relies on. */
interface TfjsBufferManager {
  acquireBuffer(size: number, usage: number, mappedAtCreation?: boolean, reuse?: boolean): GPUBuffer;
  releaseBuffer(buffer: GPUBuffer, reuse?: boolean): void;
  freeBuffers: Map<string, GPUBuffer[]>;
}

const hooked = new WeakSet<object>();

function isBufferManager(value: unknown): value is TfjsBufferManager {
  const manager = value as Partial<TfjsBufferManager> | null;
  return typeof manager?.acquireBuffer === 'function' && typeof manager.releaseBuffer === 'function' && manager.freeBuffers instanceof Map;
}

/** Wraps `manager.releaseBuffer` so that a buffer filed for reuse is discarded on the service. */
export function hookBufferManager(manager: unknown, discard: DiscardContents): boolean {
  if (!isBufferManager(manager) || hooked.has(manager)) return false;
  hooked.add(manager);
  const release = manager.releaseBuffer;
  manager.releaseBuffer = function releaseBuffer(this: TfjsBufferManager, buffer: GPUBuffer, reuse = true): void {
    release.call(this, buffer, reuse);
    // 4.x returns early, filing nothing, while its free list map is empty (before the first acquire).
    const key = `${buffer.size}_${buffer.usage}`;
    if (reuse && this.freeBuffers.get(key)?.at(-1) === buffer) discard(buffer);
  };
  return true;
}

/** Hooks the backend's pool if it has one of the known shape. */
function hookBackend(backend: unknown, discard: DiscardContents): void {
  hookBufferManager((backend as { bufferManager?: unknown } | null)?.bufferManager, discard);
}

/** Watches `engine.registry` for backends (set when one initializes), and hooks those already there. */
function watchEngine(engine: unknown, discard: DiscardContents): void {
  const target = engine as { registry?: Record<string, unknown> } | null;
  if (!target || typeof target.registry !== 'object' || target.registry === null || hooked.has(target.registry)) return;
  for (const backend of Object.values(target.registry)) hookBackend(backend, discard);
  const registry = new Proxy(target.registry, {
    set(object, name, backend) {
      hookBackend(backend, discard);
      return Reflect.set(object, name, backend);
    },
  });
  hooked.add(registry);
  target.registry = registry;
}

const ENGINE_KEY = '_tfengine';

/**
 * Installs the adapter: now if tfjs-core is already loaded, else when it sets its engine on the global
 * object (a property that stays a plain, writable value to everyone else).
 */
export function installTfjsAdapter(discard: DiscardContents): void {
  const global = globalThis as Record<string, unknown>;
  if (global[ENGINE_KEY] !== undefined) {
    watchEngine(global[ENGINE_KEY], discard);
    return;
  }
  let engine: unknown;
  Object.defineProperty(globalThis, ENGINE_KEY, {
    configurable: true,
    enumerable: false,
    get: () => engine,
    set: (value: unknown) => {
      engine = value;
      watchEngine(value, discard);
    },
  });
}
