/**
 * Paging: a job's persistent buffer leaves the GPU for host memory and comes
 * back, with the ledger exact at every step. Out: the contents are copied,
 * at most PAGE_CHUNK_BYTES at a time (less when less is free), through a MAP_READ staging buffer that is
 * the job's own persistent memory while it lives (so paging never takes more
 * than capacity), then the GPU buffer is destroyed and its bytes are counted as
 * paged out. In: a new buffer of the same real size and usage, counted like any
 * persistent allocation, is written from the host copy on the queue.
 *
 * This is the memory side of residency by reference; the executor decides
 * what to page and when (it must not let the job use a lease while it pages).
 */
import { BufferUsage, type BufferAllocator } from './allocator.js';
import { setLabel, type RealBuffer } from './bufferPool.js';
import type { Ledger } from './ledger.js';
import type { BufferLease, PageResult } from './types.js';

/** Largest staging buffer a page-out uses. */
export const PAGE_CHUNK_BYTES = 1024 * 1024;
/** Smallest: when less than this is free, a page-out waits for lanes to give back room or fails. */
const MIN_CHUNK_BYTES = 64 * 1024;

/** The manager's record of a lease, as paging sees it. */
export interface PagedRecord {
  lease: BufferLease;
  real: RealBuffer;
  freed: boolean;
  /** The contents while paged out. */
  host?: Uint8Array;
}

/** What paging needs from the memory manager. */
export interface PagerDeps {
  ledger: Ledger;
  allocator: BufferAllocator;
  nextBufferId: () => number;
  /** The lease's live record, or undefined once the job freed it or was released. */
  recordOf(leaseId: number): PagedRecord | undefined;
  /** Makes room for `bytes` more persistent memory of the job; returns why not, or null when it fits. */
  roomForPersistent(jobId: string, bytes: number, what: string): string | null;
  /** Capacity no job or lane has reserved now. */
  unreservedBytes(): number;
}

const failed = (message: string): PageResult => ({ ok: false, message });
const COPYABLE = BufferUsage.COPY_SRC | BufferUsage.COPY_DST;

/** Why the lease cannot page out now, or null. */
function cannotPageOut(record: PagedRecord | undefined, allocator: BufferAllocator): string | null {
  if (!record || record.freed) return 'the buffer was freed';
  const { lease, real } = record;
  if (lease.residency !== 'resident') return `the buffer is ${lease.residency}`;
  if (lease.kind !== 'persistent') return 'only persistent buffers page (ephemeral ones belong to a running iteration)';
  if ((real.usage & COPYABLE) !== COPYABLE) return 'the buffer has no COPY_SRC and COPY_DST usage, so it cannot be copied out and back';
  if (real.buffer.mapState !== 'unmapped') return 'the buffer is mapped';
  if (!allocator.copyBuffer || !allocator.readMapped || !allocator.writeBuffer) return 'this allocator cannot page';
  return null;
}

/** Page-out and page-in over the manager's records; see the file's comment. */
export function createPager(deps: PagerDeps) {
  const { ledger, allocator } = deps;

  /** One staging round trip of [offset, offset + bytes) of the record's buffer; null when the lease went away. */
  async function copyChunk(record: PagedRecord, offset: number, bytes: number): Promise<Uint8Array | null | string> {
    const { lease } = record;
    const room = deps.roomForPersistent(lease.jobId, bytes, `${bytes}-byte staging buffer to page out`);
    if (room) return room;
    const staging: RealBuffer = {
      id: deps.nextBufferId(),
      buffer: allocator.createBuffer({ size: bytes, usage: BufferUsage.MAP_READ | BufferUsage.COPY_DST, label: `${lease.jobId}: salus page-out staging` }),
      sizeBytes: bytes, usage: BufferUsage.MAP_READ | BufferUsage.COPY_DST, pooled: false,
    };
    ledger.record({ bufferId: staging.id, sizeBytes: bytes, pooled: false, state: 'persistent', jobId: lease.jobId, laneId: null });
    try {
      allocator.copyBuffer!(record.real.buffer, offset, staging.buffer, bytes);
      return await allocator.readMapped!(staging.buffer, bytes);
    } catch (error) {
      // Released meanwhile (the job's buffer destroyed), or the device refused: the page-out stops.
      return deps.recordOf(lease.id) === record ? `page-out failed: ${(error as Error).message}` : null;
    } finally {
      staging.buffer.destroy();
      ledger.remove(staging.id);
    }
  }

  return {
    async pageOut(lease: BufferLease): Promise<PageResult> {
      const record = deps.recordOf(lease.id);
      const reason = cannotPageOut(record, allocator);
      if (reason || !record) return failed(`cannot page out: ${reason}`);
      // Whole 4-byte words of what the job can see: copies need 4-byte sizes, and the rest of a pooled class is never seen.
      const sizeBytes = Math.min(Math.ceil(lease.sizeBytes / 4) * 4, record.real.sizeBytes);
      const host = new Uint8Array(sizeBytes);
      lease.residency = 'paging-out';
      for (let offset = 0; offset < sizeBytes; ) {
        // Staging takes what is free, up to a chunk: paging is what runs when memory is short.
        const fitting = Math.floor(Math.min(PAGE_CHUNK_BYTES, deps.unreservedBytes()) / 4) * 4;
        const chunkBytes = Math.min(sizeBytes - offset, Math.max(MIN_CHUNK_BYTES, fitting));
        const chunk = await copyChunk(record, offset, chunkBytes);
        const gone = deps.recordOf(lease.id) !== record || record.freed;
        if (gone || chunk === null || typeof chunk === 'string') {
          if (!gone) lease.residency = 'resident';
          return failed(typeof chunk === 'string' && !gone ? chunk : 'the buffer was freed while it paged out');
        }
        host.set(chunk, offset);
        offset += chunkBytes;
      }
      record.host = host;
      record.real.buffer.destroy();
      ledger.remove(record.real.id);
      ledger.addPaged(lease.jobId, record.real.sizeBytes);
      lease.residency = 'paged-out';
      return { ok: true };
    },

    pageIn(lease: BufferLease): PageResult {
      const record = deps.recordOf(lease.id);
      if (!record || !record.host || lease.residency !== 'paged-out') return failed('cannot page in: the buffer is not paged out');
      const { real } = record;
      const room = deps.roomForPersistent(lease.jobId, real.sizeBytes, `${real.sizeBytes} bytes to page a buffer back in`);
      if (room) return failed(room);
      const buffer = allocator.createBuffer({ size: real.sizeBytes, usage: real.usage, label: real.buffer.label });
      const back: RealBuffer = { ...real, id: deps.nextBufferId(), buffer };
      ledger.record({ bufferId: back.id, sizeBytes: back.sizeBytes, pooled: back.pooled, state: 'persistent', jobId: lease.jobId, laneId: null });
      ledger.addPaged(lease.jobId, -real.sizeBytes);
      allocator.writeBuffer!(buffer, record.host);
      setLabel(buffer, real.buffer.label);
      record.real = back;
      record.host = undefined;
      lease.buffer = buffer;
      lease.residency = 'resident';
      return { ok: true };
    },

    /** A paged-out lease is freed or its job released: its host copy goes, and so do its paged bytes. */
    dropPaged(record: PagedRecord): void {
      if (record.lease.residency !== 'paged-out') return;
      record.host = undefined;
      ledger.addPaged(record.lease.jobId, -record.real.sizeBytes);
    },
  };
}

