/**
 * The memory manager: the facade the executor calls for every buffer a job creates
 * or destroys on the shared device, and for admission. It keeps every admitted
 * job's persistent memory resident and serves per-iteration memory from the job's
 * lane (SALUS-NOTES, "Admission and lanes"; DESIGN.md decisions 2–4).
 *
 * Past 450 lines on purpose: it is the one facade the executor and admission
 * call; what keeps state of its own (ledger, lanes, pools, paging, admission)
 * is in the files beside it; this file holds the per-job records that tie them.
 */
import { planAdmission, invalidHints, paddedPersistentBytes, shrinkMostSlackFirst, type LaneView } from './admission.js';
import { isPoolable, type BufferAllocator, type BufferDescriptor } from './allocator.js';
import type { RealBuffer } from './bufferPool.js';
import { Ledger } from './ledger.js';
import { LaneTable, type Lane } from './lanes.js';
import { createPager } from './paging.js';
import { formatBytes } from '../platform/size.js';
import type { AllocRefusal, AllocResult, BufferLease, MemoryManager, ResourceKind, ResourceLease } from './types.js';

export type {
  AdmissionOptions, AdmissionResult, AllocResult, BufferLease, JobMemoryRequest, MemoryManager, MemorySnapshot, PageResult, ResourceKind, ResourceLease, ResourceOf, ResourceResult,
} from './types.js';

interface LeaseRecord {
  lease: BufferLease;
  real: RealBuffer;
  /** Freed by the job inside its iteration; returns to the pool at the iteration's end. */
  freed: boolean;
  /** The contents while paged out (core/memory/paging.ts). */
  host?: Uint8Array;
}

/** What the manager keeps of one job: its lane, its leases, and what its iterations have shown. */
interface JobMemory {
  id: string;
  declaredEphemeralBytes: number;
  laneId: string;
  inIteration: boolean;
  iterationsDone: number;
  /** Largest (peak − survivors) of finished iterations. */
  observedPeakBytes: number;
  /** Largest lane bytes held at once in the running iteration, freed-but-pooled buffers included. */
  iterationPeakBytes: number;
  /** Persistent bytes (resident or paged out) when its last iteration's memory side ended: its state as measured. */
  stateBytes: number;
  leases: Map<number, LeaseRecord>;
  /** Its query sets and textures by lease id, with the ledger entry that counts each. */
  resources: Map<number, { lease: ResourceLease; ledgerId: number }>;
  /** Its pooled buffers' labels by the label it gave (`poolLabel`), so a step's many allocations compose none. */
  poolLabels: Map<string | undefined, string>;
}

/** At most this many labels a job are remembered (a job may label every buffer differently). */
const POOL_LABELS_KEPT = 256;

/** The label a pooled buffer lent to `job` carries: the job, what the job called it, and the lane. */
function poolLabel(job: JobMemory, label: string | undefined): string {
  let composed = job.poolLabels.get(label);
  if (composed === undefined) {
    composed = `${job.id}: ${label ?? 'buffer'} (${job.laneId})`;
    if (job.poolLabels.size < POOL_LABELS_KEPT) job.poolLabels.set(label, composed);
  }
  return composed;
}

/** How messages name each resource kind. */
const RESOURCE_NAMES: Record<ResourceKind, string> = { querySet: 'query set', texture: 'texture' };

/** The bytes of the job's resources of `kind`. */
function resourceBytes(job: JobMemory, kind: ResourceKind): number {
  let bytes = 0;
  for (const { lease } of job.resources.values()) if (lease.kind === kind) bytes += lease.sizeBytes;
  return bytes;
}

const oom = (message: string): AllocRefusal => ({ ok: false, message, errorType: 'out-of-memory' });
const invalid = (message: string): AllocRefusal => ({ ok: false, message, errorType: 'validation' });

/**
 * Creates a manager over `allocator` with `capacityBytes` to hand out. Every buffer it
 * creates is labelled with the job that holds it.
 */
export function createMemoryManager(options: { capacityBytes: number; capacitySource: string; allocator: BufferAllocator; laneIdPrefix?: string }): MemoryManager {
  const { capacityBytes, capacitySource, allocator, laneIdPrefix } = options;
  const ledger = new Ledger();
  let bufferCount = 0;
  let leaseCount = 0;
  let changeCount = 0;
  const nextBufferId = () => ++bufferCount;
  const lanes = new LaneTable({ allocator, ledger, nextBufferId, laneIdPrefix });
  const jobs = new Map<string, JobMemory>();
  const leases = new Map<number, LeaseRecord>();

  /** Room held for batches about to allocate (Residency), by job: others may not take it meanwhile. */
  const heldRoom = new Map<string, number>();
  /** Capacity nothing has reserved now; room held for `forJobId`'s own batch counts as free for it. */
  const unreservedBytes = (forJobId?: string) => {
    let heldBytes = 0;
    for (const [jobId, bytes] of heldRoom) if (jobId !== forJobId) heldBytes += bytes;
    return capacityBytes - ledger.committedBytes() - heldBytes;
  };
  /** The job's allocation used `bytes` of the room held for it. */
  const useHeldRoom = (jobId: string, bytes: number) => {
    const held = heldRoom.get(jobId);
    if (held !== undefined) heldRoom.set(jobId, Math.max(0, held - bytes));
  };
  const pager = createPager({ ledger, allocator, nextBufferId, recordOf: (leaseId) => leases.get(leaseId), roomForPersistent, unreservedBytes });
  const needOf = (job: JobMemory) => (job.iterationsDone > 0 ? job.observedPeakBytes : job.declaredEphemeralBytes);

  function minSizeBytes(lane: Lane): number {
    let bytes = lanes.lentBytes(lane.id);
    for (const jobId of lane.jobs) bytes = Math.max(bytes, needOf(jobs.get(jobId)!));
    return bytes;
  }

  function laneViews(): LaneView[] {
    return lanes.list().map((lane) => ({ id: lane.id, sizeBytes: lanes.sizeBytes(lane.id), minSizeBytes: minSizeBytes(lane) }));
  }

  /** Shrinks lanes (but exceptLaneId) toward their need, most slack first, until bytesNeeded are unreserved again. */
  function reclaim(bytesNeeded: number, exceptLaneId: string | null): void {
    const views = laneViews().filter((view) => view.id !== exceptLaneId);
    for (const resize of shrinkMostSlackFirst(views, bytesNeeded, (view) => view.minSizeBytes)) lanes.resize(resize.laneId, resize.sizeBytes);
  }

  function lend(job: JobMemory, real: RealBuffer, sizeBytes: number, kind: BufferLease['kind']): AllocResult {
    const lease: BufferLease = {
      id: ++leaseCount,
      jobId: job.id,
      buffer: real.buffer,
      sizeBytes,
      realSizeBytes: real.sizeBytes,
      usage: real.usage,
      pooled: real.pooled,
      residency: 'resident',
      kind,
      laneId: kind === 'ephemeral' ? job.laneId : null,
    };
    const record: LeaseRecord = { lease, real, freed: false };
    useHeldRoom(job.id, real.sizeBytes);
    leases.set(lease.id, record);
    job.leases.set(lease.id, record);
    if (kind === 'ephemeral') job.iterationPeakBytes = Math.max(job.iterationPeakBytes, ledger.ephemeralBytes(job.id));
    return { ok: true, lease };
  }

  function createUnpooled(job: JobMemory, descriptor: BufferDescriptor, kind: BufferLease['kind']): AllocResult {
    const buffer = allocator.createBuffer({ ...descriptor, label: `${job.id}: ${descriptor.label ?? 'buffer'}` });
    const real: RealBuffer = { id: nextBufferId(), buffer, sizeBytes: descriptor.size, usage: descriptor.usage, pooled: false };
    const laneId = kind === 'ephemeral' ? job.laneId : null;
    ledger.record({ bufferId: real.id, sizeBytes: real.sizeBytes, pooled: false, state: kind, jobId: job.id, laneId });
    return lend(job, real, descriptor.size, kind);
  }

  /** Makes room for `bytes` more persistent memory of the job (shrinking lanes if need be); returns why not, or null. */
  function roomForPersistent(jobId: string, bytes: number, what: string): string | null {
    const heldBytes = ledger.persistentBytes(jobId);
    const beyondBytes = heldBytes + bytes - ledger.reservedPersistentBytes(jobId);
    if (beyondBytes > unreservedBytes(jobId)) reclaim(beyondBytes - unreservedBytes(jobId), null);
    if (beyondBytes <= unreservedBytes(jobId)) return null;
    return (
      `out of memory: job ${jobId} asked for ${what}; its share is ` +
      `${formatBytes(ledger.declaredShareBytes(jobId))} (declared + 10%), it holds ${formatBytes(heldBytes)}, and only ` +
      `${formatBytes(Math.max(0, unreservedBytes(jobId)))} of the GPU's ${formatBytes(capacityBytes)} is free`
    );
  }

  function allocatePersistent(job: JobMemory, descriptor: BufferDescriptor): AllocResult {
    const room = roomForPersistent(job.id, descriptor.size, `${formatBytes(descriptor.size)} of persistent memory`);
    return room ? oom(room) : createUnpooled(job, descriptor, 'persistent');
  }

  function allocateEphemeral(job: JobMemory, descriptor: BufferDescriptor, ownBytes: boolean): AllocResult {
    const lane = lanes.get(job.laneId)!;
    const label = poolLabel(job, descriptor.label);
    const classBytes = isPoolable(descriptor) ? lane.pool.classSizeFor(descriptor.size) : null;
    if (classBytes !== null) {
      const reused = lane.pool.reuse(job.id, descriptor.usage, descriptor.size, label, ownBytes);
      if (reused) return lend(job, reused, descriptor.size, 'ephemeral');
    }
    const realBytes = classBytes ?? descriptor.size;
    const growBytes = lanes.makeRoom(lane.id, realBytes);
    if (growBytes > 0) {
      if (growBytes > unreservedBytes(job.id)) reclaim(growBytes - unreservedBytes(job.id), lane.id);
      if (growBytes > unreservedBytes(job.id)) {
        return oom(
          `out of memory: job ${job.id}'s iteration asked for ${formatBytes(descriptor.size)} in ${lane.id} ` +
            `(size ${formatBytes(lanes.sizeBytes(lane.id))}, ${formatBytes(lanes.lentBytes(lane.id))} held by iterations) ` +
            `and only ${formatBytes(Math.max(0, unreservedBytes(job.id)))} of the GPU's ${formatBytes(capacityBytes)} is free to grow it`,
        );
      }
    }
    const result =
      classBytes === null
        ? createUnpooled(job, descriptor, 'ephemeral')
        : lend(job, lane.pool.create(job.id, descriptor.usage, descriptor.size, label), descriptor.size, 'ephemeral');
    // Grown only once the buffer exists, so a createBuffer that throws leaves the lane as it was.
    if (growBytes > 0) ledger.setLaneSize(lane.id, lanes.sizeBytes(lane.id) + growBytes);
    return result;
  }

  function destroyLease(record: LeaseRecord): void {
    const { lease, real } = record;
    leases.delete(lease.id);
    jobs.get(lease.jobId)?.leases.delete(lease.id);
    const lane = lease.kind === 'ephemeral' && real.pooled ? lanes.get(lease.laneId!) : undefined;
    if (lease.residency === 'paged-out') {
      pager.dropPaged(record);
    } else if (lane) {
      lane.pool.destroy(real);
    } else {
      real.buffer.destroy();
      ledger.remove(real.id);
    }
  }

  /**
   * A persistent buffer of the job's lane's pool, discarded inside its iteration, becomes a freed ephemeral buffer of
   * that lane (the reverse of endIteration's survivors), so using it again costs no createBuffer. The lane grows by
   * what it lacks for it, only within unreserved capacity (its bytes left the job's persistent memory first). False,
   * changing nothing, when it does not fit.
   */
  function rejoinLane(job: JobMemory, record: LeaseRecord): boolean {
    const { lease, real } = record;
    const lane = lanes.get(job.laneId)!;
    const growBytes = Math.max(0, ledger.laneOccupiedBytes(lane.id) + real.sizeBytes - lanes.sizeBytes(lane.id));
    lane.pool.adopt(real, job.id);
    if (growBytes > unreservedBytes(job.id)) {
      lane.pool.detach(real);
      ledger.move(real.id, { state: 'persistent', jobId: job.id, laneId: null });
      return false;
    }
    if (growBytes > 0) ledger.setLaneSize(lane.id, lanes.sizeBytes(lane.id) + growBytes);
    lease.kind = 'ephemeral';
    lease.laneId = lane.id;
    record.freed = true;
    job.iterationPeakBytes = Math.max(job.iterationPeakBytes, ledger.ephemeralBytes(job.id));
    return true;
  }

  function free(record: LeaseRecord, destroyPooled: boolean): void {
    if (record.lease.kind === 'ephemeral' && record.real.pooled && !destroyPooled) record.freed = true;
    else if (destroyPooled || !idleInLane(record)) destroyLease(record);
  }

  /**
   * A persistent buffer a lane's pool made (it survived the iteration that borrowed it), freed by the job, goes
   * back to the job's lane instead of being destroyed: inside an iteration it joins the lane as a freed ephemeral
   * buffer (`rejoinLane`, as a discard does), between iterations it waits idle for the pool's next loan when the
   * lane has room for it as it is. Frameworks free such buffers in the iteration after the one that made them
   * (ONNX Runtime's lazyRelease frees after its next submit: two a request of the zoo's small MLP), so without
   * this each request or step created them again. Reuse is ordered after the work already submitted with it: the
   * pool zeroes a buffer by a queue write.
   */
  function idleInLane(record: LeaseRecord): boolean {
    const { lease, real } = record;
    const job = jobs.get(lease.jobId);
    if (!job || lease.kind !== 'persistent' || !real.pooled || lease.residency !== 'resident') return false;
    if (job.inIteration) return rejoinLane(job, record);
    const lane = lanes.get(job.laneId);
    if (!lane || ledger.laneOccupiedBytes(lane.id) + real.sizeBytes > lanes.sizeBytes(lane.id)) return false;
    leases.delete(lease.id);
    job.leases.delete(lease.id);
    lane.pool.adopt(real, job.id);
    lane.pool.giveBack(real);
    return true;
  }

  /** The job's ephemeral buffers it freed go back to its lane's pool (its GPU work with them is done). */
  function giveBackFreed(job: JobMemory): void {
    const lane = lanes.get(job.laneId)!;
    for (const record of [...job.leases.values()]) {
      if (record.lease.kind !== 'ephemeral' || !record.freed) continue;
      leases.delete(record.lease.id);
      job.leases.delete(record.lease.id);
      lane.pool.giveBack(record.real);
    }
  }

  function destroyResource(job: JobMemory, leaseId: number): void {
    const record = job.resources.get(leaseId);
    if (!record) return;
    job.resources.delete(leaseId);
    record.lease.resource.destroy();
    ledger.remove(record.ledgerId);
  }

  return {
    capacityBytes,
    capacitySource,

    get version() {
      return ledger.revision + changeCount;
    },

    admit(request, admission) {
      const existing = jobs.get(request.jobId);
      if (existing) return { kind: 'admitted', laneId: existing.laneId };
      if (typeof request.jobId !== 'string' || request.jobId === '') return { kind: 'refused', reason: 'a job needs a non-empty id' };
      const problem = invalidHints(request);
      if (problem) return { kind: 'refused', reason: problem };
      const persistentBytes = request.persistentBytes ?? 0;
      const ephemeralBytes = request.ephemeralBytes ?? 0;
      const plan = planAdmission({
        capacityBytes,
        capacitySource,
        committedBytes: ledger.committedBytes(),
        lanes: laneViews(),
        maxLanes: admission.maxLanes,
        persistentBytes,
        ephemeralBytes,
      });
      if (plan.kind === 'wait' || plan.kind === 'refused') return { kind: plan.kind, reason: plan.reason };
      for (const resize of plan.resizes) lanes.resize(resize.laneId, resize.sizeBytes);
      const lane = plan.kind === 'new-lane' ? lanes.create(plan.laneSizeBytes) : lanes.get(plan.laneId)!;
      lane.jobs.add(request.jobId);
      jobs.set(request.jobId, {
        id: request.jobId,
        declaredEphemeralBytes: ephemeralBytes,
        laneId: lane.id,
        inIteration: false,
        iterationsDone: 0,
        observedPeakBytes: 0,
        iterationPeakBytes: 0,
        stateBytes: 0,
        leases: new Map(),
        resources: new Map(),
        poolLabels: new Map(),
      });
      ledger.addJob(request.jobId, paddedPersistentBytes(persistentBytes));
      changeCount += 1;
      return { kind: 'admitted', laneId: lane.id };
    },

    release(jobId) {
      const job = jobs.get(jobId);
      if (!job) return;
      for (const record of [...job.leases.values()]) destroyLease(record);
      for (const leaseId of [...job.resources.keys()]) destroyResource(job, leaseId);
      const lane = lanes.get(job.laneId)!;
      lane.jobs.delete(jobId);
      lane.running.delete(jobId);
      if (lane.jobs.size === 0) lanes.delete(lane.id);
      jobs.delete(jobId);
      heldRoom.delete(jobId);
      ledger.removeJob(jobId);
      changeCount += 1;
    },

    allocate(jobId, descriptor, options) {
      const job = jobs.get(jobId);
      if (!job) return invalid(`job ${jobId} is not admitted, so it cannot create buffers`);
      const { size, usage } = descriptor ?? ({} as BufferDescriptor);
      if (!Number.isSafeInteger(size) || size < 0) return invalid(`buffer size ${String(size)} is not a whole number of bytes`);
      if (!Number.isInteger(usage) || usage < 0) return invalid(`buffer usage ${String(usage)} is not a set of GPUBufferUsage flags`);
      try {
        return job.inIteration ? allocateEphemeral(job, descriptor, options?.ownBytes ?? false) : allocatePersistent(job, descriptor);
      } catch (error) {
        return invalid(`createBuffer failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    },

    allocateResource(jobId, kind, sizeBytes, create) {
      const what = RESOURCE_NAMES[kind];
      const job = jobs.get(jobId);
      if (!job) return invalid(`job ${jobId} is not admitted, so it cannot create ${what}s`);
      if (!Number.isSafeInteger(sizeBytes) || sizeBytes < 0) return invalid(`${what} size ${String(sizeBytes)} is not a whole number of bytes`);
      const room = roomForPersistent(jobId, sizeBytes, `a ${what} of ${formatBytes(sizeBytes)}`);
      if (room) return oom(room);
      let resource: ReturnType<typeof create>;
      try {
        resource = create();
      } catch (error) {
        return invalid(`creating a ${what} failed: ${error instanceof Error ? error.message : String(error)}`);
      }
      const lease = { id: ++leaseCount, jobId, kind, resource, sizeBytes };
      const ledgerId = nextBufferId();
      ledger.record({ bufferId: ledgerId, sizeBytes, pooled: false, state: 'persistent', jobId, laneId: null });
      job.resources.set(lease.id, { lease, ledgerId });
      return { ok: true, lease };
    },

    freeResource(lease) {
      const job = jobs.get(lease.jobId);
      if (job) destroyResource(job, lease.id);
    },

    free(lease, freeOptions) {
      const record = leases.get(lease.id);
      if (record) free(record, freeOptions?.discard ?? false);
    },

    freeDiscarded(lease) {
      const record = leases.get(lease.id);
      if (!record || record.freed) return;
      const job = jobs.get(lease.jobId);
      const rejoins = record.lease.kind === 'persistent' && record.real.pooled && record.lease.residency === 'resident' && job?.inIteration === true;
      if (!rejoins || !rejoinLane(job, record)) free(record, false);
    },

    takeBack(lease) {
      const record = leases.get(lease.id);
      if (!record?.freed) return false;
      record.freed = false;
      return true;
    },

    canTakeBack(lease) {
      return leases.get(lease.id)?.freed === true;
    },

    beginIteration(jobId) {
      const job = jobs.get(jobId);
      if (!job || job.inIteration) return;
      job.inIteration = true;
      job.iterationPeakBytes = 0;
      lanes.get(job.laneId)!.running.add(jobId);
      changeCount += 1;
    },

    returnFreed(jobId) {
      const job = jobs.get(jobId);
      if (!job) return;
      giveBackFreed(job);
      changeCount += 1;
    },

    endIteration(jobId) {
      const job = jobs.get(jobId);
      if (!job || !job.inIteration) return;
      const lane = lanes.get(job.laneId)!;
      giveBackFreed(job);
      let survivorBytes = 0;
      for (const record of [...job.leases.values()]) {
        if (record.lease.kind !== 'ephemeral') continue;
        // Still alive at the iteration's end: it is model state after all (e.g. lazily created weights).
        if (record.real.pooled) lane.pool.detach(record.real);
        ledger.move(record.real.id, { state: 'persistent', jobId, laneId: null });
        record.lease.kind = 'persistent';
        record.lease.laneId = null;
        survivorBytes += record.real.sizeBytes;
      }
      job.observedPeakBytes = Math.max(job.observedPeakBytes, job.iterationPeakBytes - survivorBytes);
      job.stateBytes = ledger.persistentBytes(jobId) + ledger.pagedBytes(jobId);
      job.iterationsDone += 1;
      job.inIteration = false;
      lane.running.delete(jobId);
      // What survived left the lane for the job's persistent memory: the room the lane grew for it goes back too
      // (else it counts twice, in the lane and as persistent), down to what the lane's jobs need.
      if (survivorBytes > 0) lanes.resize(lane.id, Math.max(minSizeBytes(lane), lanes.sizeBytes(lane.id) - survivorBytes));
      changeCount += 1;
      if (unreservedBytes() < 0) reclaim(-unreservedBytes(), null);
    },

    usage(jobId) {
      const job = jobs.get(jobId);
      if (!job) return { persistentBytes: 0, ephemeralPeakBytes: 0 };
      return { persistentBytes: ledger.persistentBytes(jobId), ephemeralPeakBytes: needOf(job) };
    },

    residency(jobId) {
      const job = jobs.get(jobId);
      if (!job) return { residentBytes: 0, pagedOutBytes: 0, stateBytes: 0 };
      return { residentBytes: ledger.persistentBytes(jobId) + ledger.ephemeralBytes(jobId), pagedOutBytes: ledger.pagedBytes(jobId), stateBytes: job.stateBytes };
    },

    holdRoom(jobId, bytes) {
      if (bytes > 0 && jobs.has(jobId)) heldRoom.set(jobId, bytes);
      else heldRoom.delete(jobId);
    },

    shortfallBytes(jobId, bytes, kind) {
      const job = jobs.get(jobId);
      if (!job || bytes <= 0) return 0;
      // The common case, asked before every batch that allocates: unreserved room alone covers it (the rest only adds).
      const unreserved = Math.max(0, unreservedBytes(jobId));
      if (bytes <= unreserved) return 0;
      const slackBytes = laneViews()
        .filter((view) => kind === 'persistent' || view.id !== job.laneId)
        .reduce((sum, view) => sum + Math.max(0, view.sizeBytes - view.minSizeBytes), 0);
      const availableBytes = unreserved + slackBytes;
      const ownBytes =
        kind === 'ephemeral'
          ? lanes.sizeBytes(job.laneId) - lanes.lentBytes(job.laneId) // idle pooled buffers can be evicted
          : ledger.reservedPersistentBytes(jobId) - ledger.persistentBytes(jobId); // its declared share not yet used
      return Math.max(0, bytes - Math.max(0, ownBytes) - availableBytes);
    },

    pageOut(lease) {
      return pager.pageOut(lease);
    },

    pageIn(lease) {
      return pager.pageIn(lease);
    },

    laneOf(jobId) {
      return jobs.get(jobId)?.laneId ?? null;
    },

    snapshot() {
      const usedBytes = ledger.usedBytes();
      return {
        capacityBytes,
        usedBytes,
        freeBytes: capacityBytes - usedBytes,
        committedBytes: ledger.committedBytes(),
        capacitySource,
        jobs: [...jobs.values()].map((job) => ({
          id: job.id,
          persistentBytes: ledger.persistentBytes(job.id),
          reservedPersistentBytes: ledger.reservedPersistentBytes(job.id),
          querySetBytes: resourceBytes(job, 'querySet'),
          textureBytes: resourceBytes(job, 'texture'),
          lane: job.laneId,
        })),
        lanes: lanes.list().map((lane) => ({
          id: lane.id,
          sizeBytes: lanes.sizeBytes(lane.id),
          pooledBytes: ledger.lanePooledBytes(lane.id),
          jobs: [...lane.jobs],
          running: lane.running.values().next().value ?? null,
        })),
      };
    },

    liveBuffers() {
      return ledger.liveBuffers();
    },
  };
}
