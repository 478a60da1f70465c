/** The simple remote objects: shader modules, layouts, pipelines, bind groups, query sets, command buffers. */
import { RemoteObject } from './base.js';
import type { ServiceConnection } from '../connection.js';

export class RemoteShaderModule extends RemoteObject {
  /** Compilation messages from the service's shader compiler. */
  async getCompilationInfo(): Promise<GPUCompilationInfo> {
    const rid = this.connection.allocateRid();
    const reply = this.connection.expectReply(rid);
    this.connection.record({ op: 'compilationInfo', rid, id: this.id });
    this.connection.flush();
    const { result } = await reply;
    const messages = (result as { messages: GPUCompilationMessage[] }).messages;
    return { messages: Object.freeze(messages.map((m) => Object.freeze({ ...m }))) } as unknown as GPUCompilationInfo;
  }
}

export class RemoteBindGroupLayout extends RemoteObject {}
export class RemotePipelineLayout extends RemoteObject {}
export class RemoteBindGroup extends RemoteObject {}
export class RemoteCommandBuffer extends RemoteObject {}

export class RemoteComputePipeline extends RemoteObject {
  readonly #layouts = new Map<number, RemoteBindGroupLayout>();

  /** The layout of bind group `index` (for `'auto'` layouts); one object per index, as in browsers. */
  getBindGroupLayout(index: number): RemoteBindGroupLayout {
    let layout = this.#layouts.get(index);
    if (!layout) {
      const id = this.connection.allocateId();
      this.connection.record({ op: 'getBindGroupLayout', id, pipeline: this.id, index });
      layout = new RemoteBindGroupLayout(this.connection, id, '');
      this.#layouts.set(index, layout);
    }
    return layout;
  }
}

export class RemoteQuerySet extends RemoteObject {
  constructor(connection: ServiceConnection, id: number, readonly type: GPUQueryType, readonly count: number, label?: string) {
    super(connection, id, label);
  }

  destroy(): undefined {
    this.connection.record({ op: 'destroy', id: this.id });
    return undefined;
  }
}
