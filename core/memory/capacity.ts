/**
 * How many bytes of GPU memory the service may hand out. WebGPU reports no memory
 * size, so it comes from `--memory`, else from the platform, else a stated default
 * (DESIGN.md decision 3).
 */
import { execFile } from 'node:child_process';
import { formatBytes } from '../platform/size.js';

const MiB = 1024 ** 2;
const GiB = 1024 ** 3;

/** Salus kept this much under the detected size for the driver and the framework. */
export const HEADROOM_BYTES = 300 * MiB;
/** Capacity assumed on a software GPU (SwiftShader never runs out; the ledger enforces this). */
export const SOFTWARE_DEFAULT_BYTES = 4 * GiB;
/** Capacity assumed when nothing tells us the GPU's memory size. */
export const UNKNOWN_DEFAULT_BYTES = 8 * GiB;
/** How long `nvidia-smi` may take before we stop waiting for it. */
export const NVIDIA_SMI_TIMEOUT_MS = 3000;
/** How long systeminformation's `graphics()` may take. */
export const GRAPHICS_TIMEOUT_MS = 5000;

/** A graphics controller as systeminformation's `graphics()` describes it; vram in MiB. */
export interface GraphicsController {
  vendor?: string;
  model?: string;
  vram?: number | null;
}

/** Platform look-ups, replaceable in tests. Each resolves null or [] when it learns nothing; none rejects. */
export interface CapacityProbes {
  /** Total memory, in MiB, of the GPU `nvidia-smi` lists under `deviceName` (else its first), or null. */
  nvidiaSmiMiB(deviceName?: string): Promise<number | null>;
  /** systeminformation's graphics controllers. */
  graphicsControllers(): Promise<GraphicsController[]>;
}

/** What detectCapacity knows about the device. */
export interface CapacityOptions {
  /** From `--memory`; wins over everything, used as it is (no headroom taken off). */
  configuredBytes?: number;
  /** The adapter is a CPU implementation (SwiftShader): platform sizes say nothing about it. */
  isSoftware: boolean;
  /** Adapter vendor as WebGPU reports it (`nvidia`, `amd`, …); nvidia-smi is skipped for a known other vendor. */
  vendor?: string;
  /** Adapter name; picks the matching systeminformation controller when several exist. */
  deviceName?: string;
  /** Defaults to the real platform probes. */
  probes?: CapacityProbes;
}

/** The capacity and a human-readable account of where it came from (MemoryMap.capacitySource). */
export interface DetectedCapacity {
  bytes: number;
  source: string;
}

function withTimeout<T>(promise: Promise<T>, timeoutMs: number, fallback: T): Promise<T> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(fallback), timeoutMs);
    timer.unref?.();
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      () => {
        clearTimeout(timer);
        resolve(fallback);
      },
    );
  });
}

/** The real probes: `nvidia-smi` through execFile, systeminformation loaded on first use. */
export const platformProbes: CapacityProbes = {
  nvidiaSmiMiB(deviceName) {
    return new Promise((resolve) => {
      execFile(
        'nvidia-smi',
        ['--query-gpu=name,memory.total', '--format=csv,noheader,nounits'],
        { timeout: NVIDIA_SMI_TIMEOUT_MS, windowsHide: true },
        (error, stdout) => resolve(error ? null : nvidiaSmiRowMiB(String(stdout), deviceName)),
      );
    });
  },
  async graphicsControllers() {
    const work = import('systeminformation').then(async (si) => {
      const graphics = si.graphics ?? (si as any).default?.graphics;
      return ((await graphics()).controllers ?? []) as GraphicsController[];
    });
    return withTimeout(work, GRAPHICS_TIMEOUT_MS, []);
  },
};

/**
 * From `nvidia-smi --query-gpu=name,memory.total` (one `NAME, MIB` line a GPU): the MiB of the GPU whose name
 * matches `deviceName` (either contains the other, by letters and digits only: Dawn may say
 * `nvidia-geforce-rtx-4090`), else of the first; null when there is none.
 * With several GPUs, each adapter is sized as its model is.
 */
export function nvidiaSmiRowMiB(stdout: string, deviceName?: string): number | null {
  const rows = stdout.trim().split(/\r?\n/).map((line) => {
    const comma = line.lastIndexOf(',');
    return { name: lettersAndDigits(line.slice(0, Math.max(0, comma))), mib: Number.parseFloat(line.slice(comma + 1)) };
  }).filter((row) => Number.isFinite(row.mib) && row.mib > 0);
  const name = deviceName === undefined ? '' : lettersAndDigits(deviceName);
  const named = name ? rows.find((row) => row.name && (row.name.includes(name) || name.includes(row.name))) : undefined;
  return (named ?? rows[0])?.mib ?? null;
}

const lettersAndDigits = (text: string) => text.toLowerCase().replace(/[^a-z0-9]/g, '');

function isOtherVendor(vendor: string | undefined, deviceName: string | undefined): boolean {
  const text = `${vendor ?? ''} ${deviceName ?? ''}`.toLowerCase();
  if (/nvidia|10de/.test(text)) return false;
  return Boolean(vendor && vendor.trim());
}

function pickController(controllers: GraphicsController[], deviceName: string | undefined): GraphicsController | null {
  const sized = controllers.filter((c) => typeof c.vram === 'number' && c.vram > 0);
  const name = deviceName?.trim().toLowerCase();
  const named = name ? sized.find((c) => c.model && (c.model.toLowerCase().includes(name) || name.includes(c.model.toLowerCase()))) : undefined;
  if (named) return named;
  return sized.reduce<GraphicsController | null>((best, c) => (!best || (c.vram ?? 0) > (best.vram ?? 0) ? c : best), null);
}

function detected(totalBytes: number, tool: string): DetectedCapacity | null {
  const bytes = Math.floor(totalBytes - HEADROOM_BYTES);
  if (bytes <= 0) return null;
  return { bytes, source: `${tool} (${formatBytes(totalBytes)} total, less ${formatBytes(HEADROOM_BYTES)} headroom)` };
}

/**
 * Decides the capacity, first answer wins:
 * 1. `configuredBytes` → source "--memory" (must be a positive number; rejects otherwise);
 * 2. a software GPU → SOFTWARE_DEFAULT_BYTES, "default for a software GPU; set --memory";
 * 3. `nvidia-smi` (the GPU of the adapter's name, else the first; skipped when the adapter's vendor is known and not NVIDIA);
 * 4. systeminformation's controller matching `deviceName`, else the one with the most vram;
 * 5. UNKNOWN_DEFAULT_BYTES, "default (GPU memory size unknown; set --memory)".
 * Detected sizes (3 and 4) have HEADROOM_BYTES taken off, and their source says so.
 * Never rejects because a probe failed; probes that fail count as "learned nothing".
 */
export async function detectCapacity(options: CapacityOptions): Promise<DetectedCapacity> {
  const { configuredBytes, isSoftware, vendor, deviceName } = options;
  if (configuredBytes !== undefined) {
    if (!Number.isFinite(configuredBytes) || configuredBytes <= 0) {
      throw new Error(`--memory must be a positive size, got ${String(configuredBytes)}`);
    }
    return { bytes: Math.floor(configuredBytes), source: '--memory' };
  }
  if (isSoftware) {
    return { bytes: SOFTWARE_DEFAULT_BYTES, source: 'default for a software GPU; set --memory' };
  }
  const probes = options.probes ?? platformProbes;
  if (!isOtherVendor(vendor, deviceName)) {
    const mib = await probes.nvidiaSmiMiB(deviceName).catch(() => null);
    const found = mib ? detected(mib * MiB, 'nvidia-smi') : null;
    if (found) return found;
  }
  const controllers = await probes.graphicsControllers().catch(() => []);
  const controller = pickController(controllers, deviceName);
  const found = controller ? detected((controller.vram ?? 0) * MiB, 'systeminformation') : null;
  if (found) return found;
  return { bytes: UNKNOWN_DEFAULT_BYTES, source: 'default (GPU memory size unknown; set --memory)' };
}
