/**
 * Shared memory mapped into this process: the project's own N-API addon
 * (native/shm/shm.c). The bulk channel uses it so that an upload is one copy
 * into memory the service already sees, and the service hands a view of it
 * straight to `writeBuffer`.
 *
 * The addon is optional. Where it is not built (another platform, a failed
 * build) or will not load, `loadSharedMemory()` gives null and the reason, and
 * the bulk channel moves bytes with file reads and writes instead.
 * `SALUS_SHM=0` turns it off (to compare, or to test that path).
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** A mapping: `buffer` spans it; `handle` is what `unmap` takes it back by. */
export interface SharedRegion {
  buffer: ArrayBuffer;
  handle: unknown;
}

/** What native/shm/shm.c exports. */
export interface SharedMemoryAddon {
  /** A memfd of exactly `sizeBytes`, pages allocated, sealed against shrinking and growing, mapped shared and populated (on the thread pool). */
  createSealed(sizeBytes: number): Promise<{ fd: number; region: SharedRegion }>;
  /** Maps `sizeBytes` of the open file `fd` shared and populated (on the thread pool). */
  mapShared(fd: number, sizeBytes: number): Promise<SharedRegion>;
  /**
   * Detaches `region.buffer` at once (its views become empty), then unmaps it,
   * and closes `fd` if given, on the thread pool (freeing 256 MiB of pages takes
   * a while). Again is a no-op (but still closes `fd`). Buffers from `view` that
   * are still live keep the pages mapped until the last is detached or collected.
   */
  unmap(region: SharedRegion, fd?: number): void;
  /**
   * `lengthBytes` (≥ 1) at `offsetBytes` of the region as an ArrayBuffer over the
   * mapping itself, no copy. Throws a RangeError outside the region, an Error once it is unmapped.
   */
  view(region: SharedRegion, offsetBytes: number, lengthBytes: number): ArrayBuffer;
  /** Detaches a buffer from `view` now (anything else, or again: nothing happens). */
  detach(buffer: ArrayBuffer): void;
}

/** The addon's path relative to the repository (or app.asar.unpacked) root. */
export const SHARED_MEMORY_ADDON = join('native', 'shm', 'build', 'Release', 'salus_shm.node');

let loaded: { addon: SharedMemoryAddon | null; reason: string | null } | undefined;

/** The root above this file that holds native/ (this file runs from core/ under vitest and from dist/core/ when built). */
function addonPath(): string | null {
  for (let dir = dirname(fileURLToPath(import.meta.url)), up = 0; up < 4; up++, dir = dirname(dir)) {
    const candidate = join(dir, SHARED_MEMORY_ADDON);
    if (existsSync(candidate)) return candidate;
  }
  return null;
}

function load(): { addon: SharedMemoryAddon | null; reason: string | null } {
  if (process.env.SALUS_SHM === '0') return { addon: null, reason: 'SALUS_SHM=0' };
  if (process.platform !== 'linux') return { addon: null, reason: `not built for ${process.platform}` };
  const path = addonPath();
  if (!path) return { addon: null, reason: `${SHARED_MEMORY_ADDON} is not built` };
  try {
    return { addon: createRequire(import.meta.url)(path) as SharedMemoryAddon, reason: null };
  } catch (error) {
    return { addon: null, reason: `${path} does not load: ${(error as Error).message}` };
  }
}

/** The addon (loaded once per process), or null and why. */
export function loadSharedMemory(): { addon: SharedMemoryAddon | null; reason: string | null } {
  loaded ??= load();
  return loaded;
}
