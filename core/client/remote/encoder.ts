/** Command encoders and compute passes (render passes: render.ts): every call becomes a recorded command, nothing is sent until submit or an await. */
import { RemoteObject, idOf } from './base.js';
import { RemoteCommandBuffer, type Retained } from './objects.js';
import { recordTextureCopy } from './texelCopies.js';
import { dynamicOffsetsOf } from './dynamicOffsets.js';
import { beginRenderPass, type RemoteRenderPassEncoder } from './render.js';
import { bytesOf, dictionary, optionalSize64, optionalUint32, size64, uint32 } from './webidl.js';

function debugMarker(target: RemoteObject, kind: 'push' | 'pop' | 'insert', label?: string): void {
  target.channel.record({ op: 'debugMarker', target: target.id, kind, label });
}

export class RemoteComputePassEncoder extends RemoteObject {
  /** Its encoder's set: what the pass binds must outlive the command buffer's submit. */
  readonly #retained: Retained;

  constructor(channel: RemoteObject['channel'], id: number, label: string | undefined, retained: Retained) {
    // Freed with its encoder, on the service: never sent on its own.
    super(channel, id, label, false);
    this.#retained = retained;
  }

  /** Immediate data for the dispatches after it (`dataOffset` and `size` in elements of a typed array, else bytes). */
  setImmediates(rangeOffset: number, data: ArrayBufferView | ArrayBuffer | SharedArrayBuffer, dataOffset?: number, size?: number): undefined {
    const offset = uint32(rangeOffset, 'setImmediates: rangeOffset');
    const bytes = bytesOf('setImmediates', data, optionalSize64(dataOffset, 'setImmediates: dataOffset'), optionalSize64(size, 'setImmediates: size'));
    this.channel.record({ op: 'setImmediates', pass: this.id, offset, data: this.channel.attach(bytes, true) });
    return undefined;
  }

  setPipeline(pipeline: GPUComputePipeline): undefined {
    this.channel.record({ op: 'setPipeline', pass: this.id, pipeline: idOf(pipeline, 'GPUComputePipeline') });
    return undefined;
  }

  setBindGroup(indexArg: number, bindGroup: GPUBindGroup | null, offsets?: Iterable<number> | Uint32Array, startArg?: number, lengthArg?: number): undefined {
    const index = uint32(indexArg, 'setBindGroup: index');
    const dynamicOffsets = dynamicOffsetsOf(offsets, startArg, lengthArg);
    if (bindGroup) this.#retained.add(bindGroup);
    this.channel.record({
      op: 'setBindGroup', pass: this.id, index,
      bindGroup: bindGroup === null ? null : idOf(bindGroup, 'GPUBindGroup'),
      dynamicOffsets: dynamicOffsets?.length ? dynamicOffsets : undefined,
    });
    return undefined;
  }

  dispatchWorkgroups(x: number, y = 1, z = 1): undefined {
    this.channel.record({ op: 'dispatch', pass: this.id, x: uint32(x, 'dispatchWorkgroups: x'), y: uint32(y, 'dispatchWorkgroups: y'), z: uint32(z, 'dispatchWorkgroups: z') });
    return undefined;
  }

  dispatchWorkgroupsIndirect(buffer: GPUBuffer, offset: number): undefined {
    offset = size64(offset, 'dispatchWorkgroupsIndirect: offset');
    this.#retained.add(buffer);
    this.channel.record({ op: 'dispatchIndirect', pass: this.id, buffer: idOf(buffer, 'GPUBuffer'), offset });
    return undefined;
  }

  end(): undefined {
    this.channel.record({ op: 'endPass', pass: this.id });
    return undefined;
  }

  pushDebugGroup(label: string): undefined { debugMarker(this, 'push', label); return undefined; }
  popDebugGroup(): undefined { debugMarker(this, 'pop'); return undefined; }
  insertDebugMarker(label: string): undefined { debugMarker(this, 'insert', label); return undefined; }
}

export class RemoteCommandEncoder extends RemoteObject {
  #retained: Retained = new Set();

  beginComputePass(descriptorArg?: GPUComputePassDescriptor | null): RemoteComputePassEncoder {
    const descriptor = dictionary(descriptorArg);
    const id = this.channel.allocateId();
    const tw = descriptor.timestampWrites;
    const beginningOfPassWriteIndex = optionalUint32(tw?.beginningOfPassWriteIndex, 'beginComputePass: beginningOfPassWriteIndex');
    const endOfPassWriteIndex = optionalUint32(tw?.endOfPassWriteIndex, 'beginComputePass: endOfPassWriteIndex');
    if (tw) this.#retained.add(tw.querySet);
    this.channel.record({
      op: 'beginComputePass', id, encoder: this.id, label: descriptor.label,
      timestampWrites: tw ? {
        querySet: idOf(tw.querySet, 'GPUQuerySet'),
        beginningOfPassWriteIndex,
        endOfPassWriteIndex,
      } : undefined,
    });
    return new RemoteComputePassEncoder(this.channel, id, descriptor.label, this.#retained);
  }

  beginRenderPass(descriptor: GPURenderPassDescriptor): RemoteRenderPassEncoder {
    return beginRenderPass(this, this.#retained, descriptor);
  }

  /** Both overloads: (src, srcOffset, dst, dstOffset, size) and (src, dst, size?). */
  copyBufferToBuffer(src: GPUBuffer, a: number | GPUBuffer, b?: number | GPUBuffer, c?: number, d?: number): undefined {
    let srcOffset: number, dst: GPUBuffer, dstOffset: number, size: number;
    // A buffer in second place is the three-argument overload; anything else converts as an offset.
    if (!(a instanceof RemoteObject)) {
      srcOffset = size64(a, 'copyBufferToBuffer: sourceOffset'); dst = b as GPUBuffer; dstOffset = size64(c ?? 0, 'copyBufferToBuffer: destinationOffset');
      size = d === undefined ? Math.max(0, src.size - srcOffset) : size64(d, 'copyBufferToBuffer: size');
    } else {
      srcOffset = 0; dst = a as GPUBuffer; dstOffset = 0; size = b === undefined ? src.size : size64(b, 'copyBufferToBuffer: size');
    }
    this.#retained.add(src).add(dst);
    this.channel.record({
      op: 'copyBufferToBuffer', encoder: this.id,
      src: idOf(src, 'GPUBuffer'), srcOffset, dst: idOf(dst, 'GPUBuffer'), dstOffset, size,
    });
    return undefined;
  }

  clearBuffer(buffer: GPUBuffer, offset?: number, size?: number): undefined {
    [offset, size] = [optionalSize64(offset, 'clearBuffer: offset'), optionalSize64(size, 'clearBuffer: size')];
    this.#retained.add(buffer);
    this.channel.record({ op: 'clearBuffer', encoder: this.id, buffer: idOf(buffer, 'GPUBuffer'), offset, size });
    return undefined;
  }

  resolveQuerySet(querySet: GPUQuerySet, firstArg: number, countArg: number, dst: GPUBuffer, dstOffsetArg: number): undefined {
    const [first, count] = [uint32(firstArg, 'resolveQuerySet: firstQuery'), uint32(countArg, 'resolveQuerySet: queryCount')];
    const dstOffset = size64(dstOffsetArg, 'resolveQuerySet: destinationOffset');
    this.#retained.add(querySet).add(dst);
    this.channel.record({
      op: 'resolveQuerySet', encoder: this.id, querySet: idOf(querySet, 'GPUQuerySet'),
      first, count, dst: idOf(dst, 'GPUBuffer'), dstOffset,
    });
    return undefined;
  }

  copyBufferToTexture(source: GPUTexelCopyBufferInfo, destination: GPUTexelCopyTextureInfo, size: GPUExtent3D): undefined {
    recordTextureCopy(this, this.#retained, 'copyBufferToTexture', source, destination, size);
    return undefined;
  }

  copyTextureToBuffer(source: GPUTexelCopyTextureInfo, destination: GPUTexelCopyBufferInfo, size: GPUExtent3D): undefined {
    recordTextureCopy(this, this.#retained, 'copyTextureToBuffer', source, destination, size);
    return undefined;
  }

  copyTextureToTexture(source: GPUTexelCopyTextureInfo, destination: GPUTexelCopyTextureInfo, size: GPUExtent3D): undefined {
    recordTextureCopy(this, this.#retained, 'copyTextureToTexture', source, destination, size);
    return undefined;
  }

  pushDebugGroup(label: string): undefined { debugMarker(this, 'push', label); return undefined; }
  popDebugGroup(): undefined { debugMarker(this, 'pop'); return undefined; }
  insertDebugMarker(label: string): undefined { debugMarker(this, 'insert', label); return undefined; }

  finish(descriptorArg?: GPUCommandBufferDescriptor | null): RemoteCommandBuffer {
    const descriptor = dictionary(descriptorArg);
    const id = this.channel.allocateId();
    this.channel.record({ op: 'finish', encoder: this.id, id, label: descriptor.label });
    const retained = this.#retained;
    this.#retained = new Set();
    // The service freed the encoder and its passes at finish.
    this.untrack();
    return new RemoteCommandBuffer(this.channel, id, descriptor.label, retained);
  }
}
