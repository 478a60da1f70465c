/**
 * A compute pipeline's bind group layouts, asked for once each. TF.js calls
 * `getBindGroupLayout` before every dispatch (179 times in one step of the
 * zoo's small RNN), and each call is a native call that wraps a new JavaScript
 * object, plus the notes jobLimits.ts keeps per layout. Dawn answers every call
 * for one pipeline and index with the same layout object underneath (labels
 * included), so the first answer is handed out again.
 *
 * Only an answer whose call raised no error is kept: on an invalid pipeline or
 * an index past the device's bind groups, every call must raise its error
 * again, as on a local device. Dawn raises an error inside the call that made
 * it (errorScopes.ts), so the device's error count tells.
 */
import { deviceErrorCount } from './errorScopes.js';
import { noteLayoutOfPipeline } from './jobLimits.js';

/** Each pipeline's layouts asked for so far without error, by group index. */
const known = new WeakMap<GPUComputePipeline, GPUBindGroupLayout[]>();

/** `pipeline.getBindGroupLayout(index)` on `device`, noted for the job's limits; a repeat returns the first answer. */
export function groupLayoutOf(device: GPUDevice, pipeline: GPUComputePipeline, index: number): GPUBindGroupLayout {
  let layouts = known.get(pipeline);
  const cached = layouts?.[index];
  if (cached) return cached;
  const errorsBefore = deviceErrorCount(device);
  const layout = pipeline.getBindGroupLayout(index);
  noteLayoutOfPipeline(layout, pipeline, index);
  if (deviceErrorCount(device) === errorsBefore) {
    if (!layouts) known.set(pipeline, layouts = []);
    layouts[index] = layout;
  }
  return layout;
}
