/**
 * A session's object table: the job's ids mapped to real objects on the shared
 * device. Ids live in one session only, so a job can never name another job's
 * objects. Each object belongs to the job's device that made it (the current
 * device when it was created); using it while another of the job's devices is
 * current is the validation error a local device gives. An id whose creation
 * failed on our side (out of memory, an unknown reference) maps to an invalid
 * entry: using it is a validation error, as using an error object is in WebGPU.
 */
import type { BufferLease, ResourceLease } from '../memory/memoryManager.js';

/** Raised while replaying a command: becomes a GPU error of the job, never a crash. */
export class ReplayError extends Error {
  constructor(message: string, readonly type: 'validation' | 'out-of-memory' = 'validation') {
    super(message);
  }
}

export interface BufferEntry {
  kind: 'buffer';
  obj: GPUBuffer;
  /** What the job asked for; the real buffer may be larger when it comes from a lane's pool. */
  sizeBytes: number;
  usage: number;
  /** Null for buffers the ledger does not hold (invalid descriptors Dawn rejected). */
  lease: BufferLease | null;
  destroyed: boolean;
  /** The mapped range's bytes on this side, from the one getMappedRange call Dawn allows. */
  mapped: { offset: number; range: ArrayBuffer } | null;
  mappedAtCreation: boolean;
  /**
   * The job's own label for the buffer (createBuffer's, or its latest setLabel), kept here so that the
   * buffer allocated again after a discard is named as the job named it, without asking the driver.
   */
  label?: string;
  /**
   * Set while the job's framework has declared its contents dead (the `discard` command): the memory went
   * back, `obj` is a destroyed placeholder, and the next use allocates the buffer again (core/executor/discard.ts).
   */
  discarded: boolean;
  /** The lease a discard freed, while the memory manager may still give it back (see MemoryManager.takeBack). */
  discardedLease: BufferLease | null;
}

/**
 * Bumped whenever a live buffer entry's real buffer changes (discard, revive, page-in), by moveBuffer: a bind
 * group checked at the current generation needs no check of its buffers (the per-use staleness scan is skipped).
 */
let bufferGeneration = 0;

/** Points `entry` at another real buffer (or its discarded placeholder). */
export function moveBuffer(entry: BufferEntry, obj: GPUBuffer): void {
  entry.obj = obj;
  bufferGeneration++;
}

/** The current buffer generation (see moveBuffer). */
export function currentBufferGeneration(): number {
  return bufferGeneration;
}

/** A bind group; `builtOn` is the real buffer of each of `buffers` when `obj` was made (stale once one moved). */
export interface BindGroupEntry {
  kind: 'bindGroup';
  obj: GPUBindGroup;
  buffers: BufferEntry[];
  dynamic: DynamicBinding[];
  builtOn: GPUBuffer[];
  /** The encoder whose used buffers took this group's last (so setting it again there adds nothing). */
  usedBy: EncoderState | undefined;
  /** The buffer generation at which the group was last found current (no buffer of it moved since); -1: never checked. */
  currentAt: number;
}

/**
 * What the table asks before it hands out an entry whose real object may be stale: a discarded buffer
 * is allocated again, a bind group naming a buffer that moved (paging, discard) is made again.
 */
export interface EntryRefresh {
  buffer(entry: BufferEntry): void;
  bindGroup(id: number, entry: BindGroupEntry): void;
}

/** A bind group's binding with a dynamic offset: the range setBindGroup moves, checked against the job's size. */
export interface DynamicBinding {
  binding: number;
  buffer: BufferEntry;
  offsetBytes: number;
  sizeBytes: number;
}

/** Buffers an encoder or command buffer uses, checked at submit (a destroyed one fails it). */
export type UsedBuffers = Set<BufferEntry>;

/**
 * A command encoder's own state. As in WebGPU, a command recorded into an
 * encoder (or one of its passes) that fails our checks does not raise an error
 * there: the encoder remembers the first one, and `finish()` reports it.
 */
export interface EncoderState {
  used: UsedBuffers;
  error: string | null;
  /** Ids of its passes: they go with the encoder at finish (nothing can record into them after). */
  passes: number[];
}

/**
 * Any entry. The job's device that owns it is kept by the table beside it (ObjectTable.deviceOf), not on it: a
 * property added after the literal made a second shape per kind, which optimised replay code came to depend on.
 */
export type Entry =
  | BufferEntry
  | { kind: 'shaderModule'; obj: GPUShaderModule }
  /** `dynamicBindings`: its binding numbers with a dynamic offset, in the order setBindGroup's offsets apply. */
  | { kind: 'bindGroupLayout'; obj: GPUBindGroupLayout; dynamicBindings: number[] }
  | { kind: 'pipelineLayout'; obj: GPUPipelineLayout }
  | { kind: 'computePipeline'; obj: GPUComputePipeline | null; pending?: Promise<void> }
  | BindGroupEntry
  /** `lease` is null for a query set the ledger does not hold (a count Dawn rejected). */
  | { kind: 'querySet'; obj: GPUQuerySet; lease: ResourceLease<'querySet'> | null }
  /** `lease` is null for a texture the ledger does not hold (a descriptor Dawn rejects, so it holds no memory). */
  | { kind: 'texture'; obj: GPUTexture; lease: ResourceLease<'texture'> | null; destroyed: boolean }
  /** `format`: the format it views (the texture's unless its descriptor named one). */
  | { kind: 'textureView'; obj: GPUTextureView; format: string }
  | { kind: 'sampler'; obj: GPUSampler }
  | { kind: 'renderPipeline'; obj: GPURenderPipeline | null }
  | { kind: 'renderPass'; obj: GPURenderPassEncoder; encoder: EncoderState }
  /** A render bundle encoder records on its own: its failures surface at its finish. */
  | ({ kind: 'renderBundleEncoder'; obj: GPURenderBundleEncoder } & EncoderState)
  | { kind: 'renderBundle'; obj: GPURenderBundle; used: UsedBuffers }
  | ({ kind: 'commandEncoder'; obj: GPUCommandEncoder } & EncoderState)
  | { kind: 'computePass'; obj: GPUComputePassEncoder; encoder: EncoderState }
  | { kind: 'commandBuffer'; obj: GPUCommandBuffer; used: UsedBuffers }
  /** A failed creation; `encoder` is set for a pass that failed to begin, whose commands still belong to it. */
  | { kind: 'invalid'; of: EntryKind; message: string; encoder?: EncoderState };

export type EntryKind = 'buffer' | 'shaderModule' | 'bindGroupLayout' | 'pipelineLayout' | 'computePipeline' | 'bindGroup' | 'querySet' | 'commandEncoder' | 'computePass' | 'commandBuffer'
  | 'texture' | 'textureView' | 'sampler' | 'renderPipeline' | 'renderPass' | 'renderBundleEncoder' | 'renderBundle';
type EntryOf<K extends EntryKind> = Extract<Entry, { kind: K }>;

const NAMES: Record<EntryKind, string> = {
  buffer: 'GPUBuffer', shaderModule: 'GPUShaderModule', bindGroupLayout: 'GPUBindGroupLayout',
  pipelineLayout: 'GPUPipelineLayout', computePipeline: 'GPUComputePipeline', bindGroup: 'GPUBindGroup',
  querySet: 'GPUQuerySet', commandEncoder: 'GPUCommandEncoder', computePass: 'GPUComputePassEncoder',
  commandBuffer: 'GPUCommandBuffer', texture: 'GPUTexture', textureView: 'GPUTextureView', sampler: 'GPUSampler',
  renderPipeline: 'GPURenderPipeline', renderPass: 'GPURenderPassEncoder', renderBundleEncoder: 'GPURenderBundleEncoder', renderBundle: 'GPURenderBundle',
};

/** The kinds that hold buffers until they are submitted or dropped (their buffers are pinned: never paged). */
const RECORDERS: ReadonlySet<string> = new Set(['commandEncoder', 'commandBuffer', 'renderBundleEncoder', 'renderBundle']);

/** What the job's device was created with (its `configureDevice` command). */
export interface DeviceConfig {
  features: ReadonlySet<string>;
  limits: Readonly<Record<string, number>>;
}

/** Ids below this live in pages indexed by id (the client allocates them densely from 1); any other id in a Map. */
const PAGED_ID_LIMIT = 2 ** 24;
const PAGE_BITS = 8;
const PAGE_MASK = (1 << PAGE_BITS) - 1;

/** Whether `id` is a whole number in [0, PAGED_ID_LIMIT), kept in a page. */
const paged = (id: number): boolean => (id >>> 0) === id && id < PAGED_ID_LIMIT;

/**
 * 2^PAGE_BITS consecutive ids' entries, and how many are live (a page with none goes). Each slot's kind and device
 * are also kept beside the entries, in arrays of one element kind: get() checks them there, because reading `kind`
 * and `device` off the entries themselves (an object literal of a shape of its own per kind) was a megamorphic
 * property load on every command in a service that has seen many kinds.
 */
interface Page {
  readonly entries: (Entry | undefined)[];
  /** The kind of each slot's entry ('invalid' for a failed creation; '' where none). */
  readonly kinds: (EntryKind | 'invalid' | '')[];
  /** The job's device of each slot's entry (0 where none). */
  readonly devices: number[];
  live: number;
}

export class ObjectTable {
  /**
   * Entries by id: page `id >> PAGE_BITS`, slot `id & PAGE_MASK`, so a lookup is two array loads and no hashing.
   * The client never reuses an id, so pages whose objects were all released are dropped: memory follows the
   * live objects, not the highest id. Other ids (only a broken client sends those) go to `others`.
   */
  private readonly pages: (Page | undefined)[] = [];
  private readonly others = new Map<number, Entry>();
  private readonly otherDevices = new Map<number, number>();
  private liveCount = 0;
  /** The job's device that commands are replayed for now (its id from `configureDevice`). */
  deviceId = 1;
  private config: DeviceConfig | null = null;
  /** The current device's maxComputeWorkgroupsPerDimension (Infinity when it declared none): every dispatch checks it. */
  maxWorkgroupsPerDimension = Infinity;

  /** That device's own features and limits; null until it says (then only the shared device's apply). */
  get device(): DeviceConfig | null {
    return this.config;
  }

  set device(config: DeviceConfig | null) {
    this.config = config;
    this.maxWorkgroupsPerDimension = config?.limits.maxComputeWorkgroupsPerDimension ?? Infinity;
  }
  /** Set by the session; without it a discarded buffer cannot be used. */
  refresh: EntryRefresh | null = null;
  /** Whether any buffer of the job was ever discarded (until then, no batch can bring one back). */
  everDiscarded = false;
  /** Live encoders, command buffers and render bundles: the buffers they name must keep their real buffers until submit. */
  private readonly recorders = new Set<Entry>();

  get size(): number {
    return this.liveCount;
  }

  /** Registers a created object. Reusing a live id is a protocol violation, reported as a validation error. */
  set(id: number, entry: Entry): void {
    this.store(id, entry, this.deviceId);
    if (RECORDERS.has(entry.kind)) this.recorders.add(entry);
  }

  has(id: number): boolean {
    return this.peek(id) !== undefined;
  }

  /** Marks `id` as a failed creation of `kind`. */
  invalidate(id: number, kind: EntryKind, message: string, encoder?: EncoderState): void {
    this.store(id, { kind: 'invalid', of: kind, message, encoder }, this.deviceId);
  }

  /** The live entry of `id` and `kind`, or a ReplayError saying what is wrong with it. */
  get<K extends EntryKind>(id: number, kind: K): EntryOf<K> {
    const page = paged(id) ? this.pages[id >>> PAGE_BITS] : undefined;
    const slot = id & PAGE_MASK;
    // The common case reads only the page's arrays and, for buffers and bind groups, one field of their own shape.
    const entry = (page !== undefined && page.kinds[slot] === kind && page.devices[slot] === this.deviceId
      ? page.entries[slot] : this.checked(id, kind)) as EntryOf<K>;
    if (kind === 'buffer') {
      const buffer = entry as BufferEntry;
      if (buffer.discarded) {
        if (!this.refresh) throw new ReplayError(`buffer id ${id} was discarded and this service cannot bring it back`);
        this.refresh.buffer(buffer);
      }
    } else if (kind === 'bindGroup' && (entry as BindGroupEntry).currentAt !== bufferGeneration) {
      this.refresh?.bindGroup(id, entry as BindGroupEntry);
    }
    return entry;
  }

  /**
   * The entry of `id` when it is a live `kind` of the current device (an id outside the pages, which only a broken
   * client sends, lives in `others`), else a ReplayError saying what is wrong with it.
   */
  private checked(id: number, kind: EntryKind): Entry {
    const entry = this.peek(id);
    if (!entry) throw new ReplayError(`${NAMES[kind]} id ${id} does not exist in this job (never created, or released)`);
    if (entry.kind === 'invalid') {
      throw new ReplayError(`invalid ${NAMES[entry.of]} (id ${id}) used: ${entry.message}`);
    }
    if (entry.kind !== kind) throw new ReplayError(`id ${id} is a ${NAMES[(entry as { kind: EntryKind }).kind]}, not a ${NAMES[kind]}`);
    const device = this.deviceOf(id);
    if (device !== this.deviceId) {
      throw new ReplayError(`[${NAMES[kind]} id ${id}] is associated with the job's device ${device}, and cannot be used with its device ${this.deviceId}`);
    }
    return entry;
  }

  /** Whether a live encoder or command buffer names `buffer` (then its real buffer must stay until submit). */
  isRecorded(buffer: BufferEntry): boolean {
    for (const recorder of this.recorders) if ((recorder as EncoderState).used.has(buffer)) return true;
    return false;
  }

  /** The buffers live encoders and command buffers name. */
  recordedBuffers(): Set<BufferEntry> {
    const buffers = new Set<BufferEntry>();
    for (const recorder of this.recorders) for (const b of (recorder as EncoderState).used) buffers.add(b);
    return buffers;
  }

  /** The encoder that a command on encoder or pass `id` records into, whether or not `id` is valid. */
  encoderOf(id: number): EncoderState | null {
    const entry = this.peek(id);
    if (entry?.kind === 'commandEncoder') return entry;
    if (entry?.kind === 'computePass' || entry?.kind === 'renderPass') return entry.encoder;
    if (entry?.kind === 'renderBundleEncoder') return entry;
    if (entry?.kind === 'invalid') return entry.encoder ?? null;
    return null;
  }

  /** The job's device that made `id`'s live entry (undefined: none). */
  deviceOf(id: number): number | undefined {
    if (!paged(id)) return this.otherDevices.get(id);
    const page = this.pages[id >>> PAGE_BITS];
    return page?.entries[id & PAGE_MASK] ? page.devices[id & PAGE_MASK] : undefined;
  }

  /** Any entry of `id`, for labels and destroy. */
  peek(id: number): Entry | undefined {
    if (paged(id)) return this.pages[id >>> PAGE_BITS]?.entries[id & PAGE_MASK];
    return this.others.get(id);
  }

  delete(id: number): void {
    this.store(id, undefined);
  }

  /** Every live entry. */
  *values(): IterableIterator<Entry> {
    for (const page of this.pages) {
      if (page) for (const entry of page.entries) if (entry) yield entry;
    }
    yield* this.others.values();
  }

  /** The ids of device `deviceId`'s objects. */
  idsOf(deviceId: number): number[] {
    const ids: number[] = [];
    this.pages.forEach((page, index) => {
      page?.entries.forEach((entry, slot) => {
        if (entry && page.devices[slot] === deviceId) ids.push(index * (PAGE_MASK + 1) + slot);
      });
    });
    for (const [id, device] of this.otherDevices) if (device === deviceId) ids.push(id);
    return ids;
  }

  clear(): void {
    this.recorders.clear();
    this.pages.length = 0;
    this.others.clear();
    this.otherDevices.clear();
    this.liveCount = 0;
  }

  /** Puts `entry` (undefined: nothing) of job device `device` at `id`; what was there stops being a live recorder. */
  private store(id: number, entry: Entry | undefined, device = 0): void {
    let old: Entry | undefined;
    if (paged(id)) {
      const index = id >>> PAGE_BITS;
      let page = this.pages[index];
      if (!page) {
        if (!entry) return;
        page = {
          entries: new Array<Entry | undefined>(PAGE_MASK + 1).fill(undefined),
          kinds: new Array<Page['kinds'][number]>(PAGE_MASK + 1).fill(''),
          devices: new Array<number>(PAGE_MASK + 1).fill(0),
          live: 0,
        };
        this.pages[index] = page;
      }
      const slot = id & PAGE_MASK;
      old = page.entries[slot];
      page.entries[slot] = entry;
      page.kinds[slot] = entry ? entry.kind : '';
      page.devices[slot] = entry ? device : 0;
      page.live += (entry ? 1 : 0) - (old ? 1 : 0);
      if (page.live === 0) this.pages[index] = undefined;
    } else {
      old = this.others.get(id);
      if (entry) {
        this.others.set(id, entry);
        this.otherDevices.set(id, device);
      } else {
        this.others.delete(id);
        this.otherDevices.delete(id);
      }
    }
    this.liveCount += (entry ? 1 : 0) - (old ? 1 : 0);
    if (old) this.recorders.delete(old);
  }
}
