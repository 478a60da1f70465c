/**
 * The one module that loads the native WebGPU binding (`webgpu`, Dawn's node
 * build). It lists the adapters Dawn offers, opens the service's shared device on
 * each GPU with the adapter's full limits and features, and falls back by itself
 * to SwiftShader's Vulkan driver (shipped by Debian's `chromium`) when no
 * hardware adapter exists.
 */
import { existsSync } from 'node:fs';
import { create, globals } from 'webgpu';
import type { GpuInfo } from '../protocol/state.js';
import { EXIT_NO_GPU } from '../protocol/exitCodes.js';

/** Where Debian's and Ubuntu's Chromium packages put SwiftShader's Vulkan ICD. */
export const SWIFTSHADER_ICD_PATHS = [
  '/usr/lib/chromium/vk_swiftshader_icd.json',
  '/usr/lib/chromium-browser/vk_swiftshader_icd.json',
];

/** The one command that installs a software GPU (SwiftShader, with the Vulkan loader) on Debian and Ubuntu. */
export const SOFTWARE_GPU_INSTALL_COMMAND = 'sudo apt-get install chromium libvulkan1';

/** No WebGPU adapter at all; the message says what to install. `exitCode` is EXIT_NO_GPU. */
export class NoGpuError extends Error {
  readonly exitCode = EXIT_NO_GPU;
}

/** What to do when no adapter exists: the install command on Linux, a driver elsewhere. */
export function noAdapterMessage(platform: NodeJS.Platform = process.platform): string {
  if (platform === 'linux') {
    return 'salus: no GPU driver and no software GPU found. Install a GPU driver with Vulkan support, ' +
      "or Debian's software GPU (SwiftShader) with:\n\n    " + SOFTWARE_GPU_INSTALL_COMMAND + '\n';
  }
  return 'salus: no WebGPU adapter found. Install a GPU driver with ' + (platform === 'darwin' ? 'Metal' : 'D3D12 or Vulkan') + ' support.';
}

/** How to pick the adapter. */
export interface GpuOptions {
  /** Dawn backend name: `vulkan`, `metal`, `d3d12`, `opengl`… Dawn's default when absent. */
  backend?: string;
  /** Substring of the adapter's name (e.g. `NVIDIA`, `SwiftShader`) to pick among several. */
  adapter?: string;
  powerPreference?: GPUPowerPreference;
}

/** The shared device and what the service says about it. */
export interface OpenedGpu {
  /** The adapter's name as Dawn lists it (`adapter=NAME` matches it), else its description. */
  name: string;
  adapter: GPUAdapter;
  device: GPUDevice;
  info: GpuInfo;
  /** Adapter limits as a plain object (what the device was created with). */
  limits: Record<string, number>;
  /** WGSL language extensions the WebGPU implementation supports. */
  wgslLanguageFeatures: string[];
}

let globalsInstalled = false;

/**
 * Every Dawn instance made here stays reachable for the life of the process: if
 * the `GPU` object is garbage-collected while its adapter or device is in use,
 * dawn.node crashes the process (seen as a segfault a second or so after start).
 */
const instances: GPU[] = [];

/** Puts `GPUBufferUsage`, `GPUMapMode`, … on `globalThis`, as a browser has them. */
export function installWebGpuGlobals(): void {
  if (globalsInstalled) return;
  for (const [key, value] of Object.entries(globals)) {
    if (!(key in globalThis)) (globalThis as any)[key] = value;
  }
  globalsInstalled = true;
}

function dawnFlags(options: GpuOptions, toggles: readonly string[] = []): string[] {
  const flags: string[] = [...toggles];
  if (options.backend) flags.push(`backend=${options.backend}`);
  if (options.adapter) flags.push(`adapter=${options.adapter}`);
  return flags;
}

/** Finds SwiftShader's ICD file, or null when none is installed. */
export function findSwiftShaderIcd(): string | null {
  return SWIFTSHADER_ICD_PATHS.find((p) => existsSync(p)) ?? null;
}

async function requestAdapter(options: GpuOptions, toggles: readonly string[] = []): Promise<GPUAdapter | null> {
  const gpu = create(dawnFlags(options, toggles)) as GPU;
  instances.push(gpu);
  return gpu.requestAdapter({ powerPreference: options.powerPreference ?? 'high-performance' });
}

/** Copies a `GPUSupportedLimits` (whose fields are getters) into a plain object. */
export function limitsToObject(limits: GPUSupportedLimits): Record<string, number> {
  const out: Record<string, number> = {};
  for (const key in limits) {
    const value = (limits as any)[key];
    if (typeof value === 'number') out[key] = value;
  }
  return out;
}

/** Names of CPU implementations of WebGPU's backends. */
const SOFTWARE_NAME = /swiftshader|llvmpipe|lavapipe|warp|software/i;

/** Describes an adapter as plain JSON; SwiftShader and other CPU adapters are `isSoftware`. */
export function describeAdapter(adapter: GPUAdapter, backend: string): GpuInfo {
  const info = adapter.info;
  const text = `${info.vendor} ${info.architecture} ${info.device} ${info.description}`.toLowerCase();
  const isSoftware = Boolean((info as any).isFallbackAdapter) || SOFTWARE_NAME.test(text);
  const subgroups = info as { subgroupMinSize?: number; subgroupMaxSize?: number };
  return {
    vendor: info.vendor,
    architecture: info.architecture,
    device: info.device,
    description: info.description,
    backend,
    isSoftware,
    features: [...adapter.features].sort(),
    subgroupMinSize: subgroups.subgroupMinSize,
    subgroupMaxSize: subgroups.subgroupMaxSize,
  };
}

/**
 * Opens an adapter: hardware first; when none answers and no backend or adapter
 * was forced, SwiftShader through `VK_ICD_FILENAMES`. Throws with what to do
 * when neither exists.
 */
export async function openAdapter(options: GpuOptions = {}, toggles: readonly string[] = []): Promise<{ adapter: GPUAdapter; backend: string }> {
  installWebGpuGlobals();
  let adapter = await requestAdapter(options, toggles);
  if (!adapter && !process.env.VK_ICD_FILENAMES) {
    const icd = findSwiftShaderIcd();
    if (icd) {
      // The Vulkan loader reads this when Dawn creates its next instance.
      process.env.VK_ICD_FILENAMES = icd;
      adapter = await requestAdapter({ ...options, backend: options.backend ?? 'vulkan' }, toggles);
    }
  }
  if (!adapter) {
    throw new NoGpuError(noAdapterMessage());
  }
  return { adapter, backend: options.backend ?? (process.platform === 'darwin' ? 'metal' : process.platform === 'win32' ? 'd3d12' : 'vulkan') };
}

/**
 * Dawn toggles of the service's shared device (dawn.node takes them as instance flags and passes them on to
 * the devices its adapters open). A local device (`salus run --local`) keeps Dawn's defaults.
 *
 * - `timestamp_quantization` off: Dawn rounds every resolved timestamp down to a coarse step, a browser's
 *   defence against timing attacks by web pages, with a compute pass of its own in each `resolveQuerySet`.
 *   The service is not a browser (its jobs are local processes with `performance.now()`), and it resolves
 *   timestamps in every timed iteration (iterationTimer.ts): on a software GPU that compute pass woke the
 *   GPU's worker threads, which then spin, for 0.2 µs of the service's CPU per cheap command in the wire
 *   bench (15%). Where the GPU's tick is not a nanosecond, Dawn still converts with its compute pass.
 */
export const SHARED_DEVICE_TOGGLES: readonly string[] = ['disable-dawn-features=timestamp_quantization'];

/** Opens the shared device with every limit and feature the adapter has, and SHARED_DEVICE_TOGGLES. */
export async function openGpu(options: GpuOptions = {}): Promise<OpenedGpu> {
  const { adapter, backend } = await openAdapter(options, SHARED_DEVICE_TOGGLES);
  const limits = limitsToObject(adapter.limits);
  const device = await adapter.requestDevice({
    label: 'salus shared device',
    requiredFeatures: [...adapter.features] as GPUFeatureName[],
    requiredLimits: limits,
  });
  const wgsl = (instances[instances.length - 1] as { wgslLanguageFeatures?: Iterable<string> }).wgslLanguageFeatures;
  const info = describeAdapter(adapter, backend);
  return { name: options.adapter ?? (info.description || info.device), adapter, device, info, limits, wgslLanguageFeatures: wgsl ? [...wgsl].sort() : [] };
}

/** An adapter Dawn offers: its backend, and its name (what `adapter=NAME` matches). */
export interface ListedAdapter {
  backend: string;
  name: string;
  /** A CPU implementation (SwiftShader, llvmpipe, …), by its name. */
  isSoftware: boolean;
}

/** No adapter's name contains this, so asking for it makes dawn.node answer with its list. */
const NO_SUCH_ADAPTER = 'salus-list-adapters-\u0001';

/** Reads dawn.node's list (`Available adapters:` then ` * backend: 'vulkan', name: 'NAME'` lines). */
export function parseAdapterList(message: string): ListedAdapter[] {
  const listed: ListedAdapter[] = [];
  for (const match of message.matchAll(/^\s*\* backend: '([^']*)', name: '(.*)'\s*$/gm)) {
    listed.push({ backend: match[1], name: match[2], isSoftware: SOFTWARE_NAME.test(match[2]) });
  }
  return listed;
}

/**
 * Every adapter Dawn offers (of `options.backend` only, when given), the way dawn.node's README documents:
 * asking for an adapter that no name matches rejects with the list. When there is none at all and no
 * driver was forced, SwiftShader's ICD is set up first, as `openAdapter` does.
 */
export async function listAdapters(options: GpuOptions = {}): Promise<ListedAdapter[]> {
  await openAdapter({ ...options, adapter: undefined }).catch(() => undefined); // Sets up the software fallback when needed.
  const gpu = create(dawnFlags({ ...options, adapter: NO_SUCH_ADAPTER })) as GPU;
  instances.push(gpu);
  try {
    await gpu.requestAdapter();
    return [];
  } catch (error) {
    const listed = parseAdapterList((error as Error).message);
    return options.backend ? listed.filter((entry) => entry.backend === options.backend) : listed;
  }
}

/** The native `navigator.gpu` for a job that runs on a local device (`salus run --local`). */
export async function localNavigatorGpu(options: GpuOptions = {}): Promise<GPU> {
  await openAdapter(options); // Sets up the software fallback when needed.
  const gpu = create(dawnFlags(options)) as GPU;
  instances.push(gpu);
  return gpu;
}
