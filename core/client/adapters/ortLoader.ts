/**
 * Module loader hooks (node:module register) for the ONNX Runtime Web adapter
 * (ort.ts): when the job imports one of ORT's ES module bundles, it gets a
 * small module that re-exports the bundle after adapting its
 * `InferenceSession`. The bundle itself loads unchanged, once.
 */

/** ORT's ES module bundles (`onnxruntime-web/dist/ort.*.mjs`), not its WebAssembly glue. */
const ORT_BUNDLE = /\/onnxruntime-web\/dist\/ort(\.[a-z]+)*\.mjs$/;
const ADAPTER_URL = new URL('./ort.js', import.meta.url).href;

interface ResolveResult { url: string; format?: string | null; shortCircuit?: boolean }
type NextResolve = (specifier: string, context: { parentURL?: string }) => Promise<ResolveResult>;

/** Node's resolve hook: an ORT bundle imported by anything but our wrapper resolves to the wrapper. */
export async function resolve(specifier: string, context: { parentURL?: string }, nextResolve: NextResolve): Promise<ResolveResult> {
  const resolved = await nextResolve(specifier, context);
  if (!ORT_BUNDLE.test(resolved.url) || context.parentURL?.startsWith('data:')) return resolved;
  const real = JSON.stringify(resolved.url);
  const source = `import * as ort from ${real};\nimport { adaptOrt } from ${JSON.stringify(ADAPTER_URL)};\nadaptOrt(ort);\nexport * from ${real};\n`;
  return { url: `data:text/javascript,${encodeURIComponent(source)}`, format: 'module', shortCircuit: true };
}
