/**
 * ONNX Runtime Web (1.2x; tested with 1.30.0). Its WebGPU execution provider
 * keeps released buffers in caches inside its WebAssembly, out of reach of any
 * JavaScript hook, so the service would count its caches as model state. The EP
 * has an option for that: `storageBufferCacheMode` and `uniformBufferCacheMode`
 * `'lazyRelease'` make it destroy a buffer once the work that used it is
 * submitted (`'disabled'` destroys it at once, before that submit, which
 * fails validation on any device). The adapter makes
 * that the default for sessions on the WebGPU EP (a job's own choice wins),
 * by wrapping `InferenceSession.create` of the module the job imports: the
 * loader hook of ortLoader.ts hands the job a module that re-exports ORT's and
 * calls `adaptOrt` first. Freed buffers then go back to the lane between
 * requests, at the cost of creating them again (through the lane's pool).
 */

const CACHE_OPTIONS = ['storageBufferCacheMode', 'uniformBufferCacheMode'] as const;

type ProviderOption = string | { name: string; [key: string]: unknown };

/** The execution providers with the WebGPU EP's buffer caches off where the job did not choose. */
export function withoutBufferCaches(providers: readonly ProviderOption[]): ProviderOption[] {
  return providers.map((provider) => {
    const options = typeof provider === 'string' ? { name: provider } : provider;
    if (options.name !== 'webgpu') return provider;
    const adapted: { name: string; [key: string]: unknown } = { ...options };
    for (const key of CACHE_OPTIONS) adapted[key] ??= 'lazyRelease';
    return adapted;
  });
}

const adapted = new WeakSet<object>();

/** Wraps `ort.InferenceSession.create` so sessions on the WebGPU EP free their buffers (see the file's comment). */
export function adaptOrt(ort: { InferenceSession?: { create?: (...args: unknown[]) => Promise<unknown> } }): void {
  const sessionClass = ort.InferenceSession;
  const create = sessionClass?.create;
  if (!sessionClass || typeof create !== 'function' || adapted.has(sessionClass)) return;
  adapted.add(sessionClass);
  sessionClass.create = function createSession(this: unknown, ...args: unknown[]) {
    // create(uri | bytes, options?) or create(buffer, byteOffset, byteLength?, options?): options is the last object.
    const at = args.findLastIndex((arg) => typeof arg === 'object' && arg !== null && !ArrayBuffer.isView(arg) && !(arg instanceof ArrayBuffer));
    const options = at > 0 ? (args[at] as { executionProviders?: ProviderOption[] }) : undefined;
    if (options && Array.isArray(options.executionProviders)) {
      args[at] = { ...options, executionProviders: withoutBufferCaches(options.executionProviders) };
    }
    return create.apply(this, args);
  };
}
