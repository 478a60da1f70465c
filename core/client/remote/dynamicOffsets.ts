/** setBindGroup's dynamic offsets, for compute passes, render passes and render bundle encoders alike. */
import { size64, uint32 } from './webidl.js';

/**
 * Both overloads' offsets as numbers: a sequence (each an `[EnforceRange]` GPUBufferDynamicOffset), or
 * `length` elements of a Uint32Array from `start` (a RangeError when past its end).
 */
export function dynamicOffsetsOf(offsets: Iterable<number> | Uint32Array | undefined, startArg?: number, lengthArg?: number): number[] | undefined {
  if (offsets instanceof Uint32Array && startArg !== undefined) {
    const start = size64(startArg, 'setBindGroup: dynamicOffsetsDataStart');
    const length = uint32(lengthArg, 'setBindGroup: dynamicOffsetsDataLength');
    if (start + length > offsets.length) {
      throw new RangeError(`setBindGroup: dynamic offsets [${start}, ${start + length}) are past the data's ${offsets.length} elements`);
    }
    return [...offsets.subarray(start, start + length)];
  }
  return offsets ? [...offsets].map((offset) => uint32(offset, 'setBindGroup: dynamic offset')) : undefined;
}
