/**
 * A second software GPU for tests and benchmarks on machines without GPUs: a copy of Debian chromium's SwiftShader Vulkan
 * driver whose device name (`SwiftShader Device`, NUL-terminated) is replaced by another of the same length,
 * and a Vulkan ICD file for it. With `VK_ICD_FILENAMES` listing both ICD files, Dawn offers two adapters with
 * different names (`SwiftShader Device (Subzero)` and `SwiftShader Twin 2 (Subzero)`), so `salus serve --gpus
 * all` opens two GPUs. Made in a temporary folder, never in the repository.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { SWIFTSHADER_ICD_PATHS } from '../core/platform/gpu.js';

const DEVICE_NAME = Buffer.from('SwiftShader Device\0', 'latin1');
const TWIN_NAME = Buffer.from('SwiftShader Twin 2\0', 'latin1');

/** The two ICD files to put in VK_ICD_FILENAMES, the adapters' names, and how to remove the copy. */
export interface TwinGpus {
  env: { VK_ICD_FILENAMES: string };
  names: [string, string];
  remove(): void;
}

/** Makes the twin driver, or returns null (with why in `reason`) where SwiftShader is not installed. */
export function makeTwinSwiftShader(): TwinGpus | { reason: string } {
  const icd = SWIFTSHADER_ICD_PATHS.find((path) => existsSync(path));
  if (!icd) return { reason: "no SwiftShader ICD (Debian's chromium package)" };
  const library = JSON.parse(readFileSync(icd, 'utf8')).ICD.library_path as string;
  const libraryPath = isAbsolute(library) ? library : resolve(dirname(icd), library);
  const bytes = readFileSync(libraryPath);
  const at = bytes.indexOf(DEVICE_NAME);
  if (at < 0 || bytes.indexOf(DEVICE_NAME, at + 1) >= 0) return { reason: `${libraryPath} does not name its device once as 'SwiftShader Device'` };
  TWIN_NAME.copy(bytes, at);
  const dir = mkdtempSync(join(tmpdir(), 'salus-twin-gpu-'));
  const twinLibrary = join(dir, 'libvk_swiftshader_twin.so');
  writeFileSync(twinLibrary, bytes);
  const twinIcd = join(dir, 'vk_swiftshader_twin_icd.json');
  writeFileSync(twinIcd, JSON.stringify({ file_format_version: '1.0.0', ICD: { library_path: twinLibrary, api_version: '1.0.5' } }));
  return {
    env: { VK_ICD_FILENAMES: `${icd}:${twinIcd}` },
    names: ['SwiftShader Device (Subzero)', 'SwiftShader Twin 2 (Subzero)'],
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
