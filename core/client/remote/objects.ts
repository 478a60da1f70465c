/** The simple remote objects: shader modules, layouts, pipelines, bind groups, query sets, command buffers. */
import { RemoteObject } from './base.js';
import type { DeviceChannel } from './channel.js';
import { compilationInfo, type CompilationMessageFields } from './interfaces.js';
import { wrappedUint32 } from './webidl.js';

export class RemoteShaderModule extends RemoteObject {
  /** Compilation messages from the service's shader compiler. */
  async getCompilationInfo(): Promise<GPUCompilationInfo> {
    const rid = this.channel.allocateRid();
    const reply = this.channel.expectReply(rid);
    this.channel.record({ op: 'compilationInfo', rid, id: this.id });
    this.channel.flush();
    let result: unknown;
    try {
      ({ result } = await reply);
    } catch (error) {
      if (!this.channel.deviceLost) throw error;
      result = { messages: [] };
    }
    return compilationInfo((result as { messages: CompilationMessageFields[] }).messages);
  }
}

export class RemoteBindGroupLayout extends RemoteObject {}
export class RemotePipelineLayout extends RemoteObject {}

/**
 * Objects that recorded work holds on to until it is submitted, so the garbage
 * collector cannot free (and the service destroy) a buffer or query set that an
 * unsubmitted command buffer still uses.
 */
export type Retained = Set<object>;

export class RemoteBindGroup extends RemoteObject {
  readonly #buffers: readonly object[];

  constructor(channel: DeviceChannel, id: number, label: string | undefined, buffers: readonly object[]) {
    super(channel, id, label);
    this.#buffers = buffers;
  }
}

export class RemoteCommandBuffer extends RemoteObject {
  #retained: Retained | null;

  constructor(channel: DeviceChannel, id: number, label: string | undefined, retained: Retained) {
    super(channel, id, label);
    this.#retained = retained;
  }

  /** Submitted: what it used may go now (destroying it after a submit is allowed), and the service has freed it. */
  submitted(): void {
    this.#retained = null;
    this.untrack();
  }
}

export class RemoteComputePipeline extends RemoteObject {
  /** The layout of bind group `index` (for `'auto'` layouts): a new object on every call, as in browsers. */
  getBindGroupLayout(index: number): RemoteBindGroupLayout {
    const id = this.channel.allocateId();
    this.channel.record({ op: 'getBindGroupLayout', id, pipeline: this.id, index: wrappedUint32(index) });
    return new RemoteBindGroupLayout(this.channel, id, '');
  }
}

export class RemoteQuerySet extends RemoteObject {
  readonly #type: GPUQueryType;
  readonly #count: number;

  constructor(channel: DeviceChannel, id: number, type: GPUQueryType, count: number, label?: string) {
    super(channel, id, label);
    this.#type = type;
    this.#count = count;
  }

  get type(): GPUQueryType { return this.#type; }

  get count(): number { return this.#count; }

  destroy(): undefined {
    this.channel.record({ op: 'destroy', id: this.id });
    return undefined;
  }
}
