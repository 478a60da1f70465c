// A job's error scopes on a real shared device, with no real scope pushed for its segments: the errors
// Dawn raises inside a segment (validation, a buffer past the size limit) reach the job's virtual
// scopes or the job, every one, at the segment's close; nothing raised outside a segment is the job's.
import { describe, expect, it } from 'vitest';
import { useFileDevice } from '../../helpers/fileDevice.js';
import { ErrorScopes } from '../../../core/executor/errorScopes.js';
import type { GpuErrorJson } from '../../../core/protocol/commands.js';

const file = useFileDevice('error scopes tests');

function scopes(): { scopes: ErrorScopes; uncaptured: GpuErrorJson[]; errors: () => number } {
  const uncaptured: GpuErrorJson[] = [];
  let errors = 0;
  return { scopes: new ErrorScopes(file.device, (error) => uncaptured.push(error), () => errors++), uncaptured, errors: () => errors };
}

/** A buffer that fails validation: MAP_READ goes only with COPY_DST. */
const badBuffer = () => file.device.createBuffer({ size: 16, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.STORAGE });

/** A submit that fails validation: a dispatch with no pipeline set. */
function badSubmit(): void {
  const encoder = file.device.createCommandEncoder();
  const pass = encoder.beginComputePass();
  pass.dispatchWorkgroups(1);
  pass.end();
  file.device.queue.submit([encoder.finish()]);
}

describe('ErrorScopes', () => {
  it('gives a scope the first error of its kind raised in its segments, and pops at once', () => {
    const { scopes: job, uncaptured, errors } = scopes();
    job.push('validation');
    job.openSegment();
    badBuffer();
    badSubmit();
    job.closeSegment();
    const error = job.pop();
    expect(error?.type).toBe('validation');
    expect(error?.message).toMatch(/MAP_READ|usage/i);
    expect(uncaptured).toEqual([]);
    expect(errors()).toBeGreaterThanOrEqual(2);
    expect(job.depth).toBe(0);
  });

  it('sends every error no scope of its kind catches to the job, in order', () => {
    const { scopes: job, uncaptured } = scopes();
    job.push('out-of-memory');
    job.openSegment();
    badBuffer();
    file.device.createBuffer({ size: 2 ** 40, usage: GPUBufferUsage.STORAGE });
    job.closeSegment();
    expect(job.pop()).toBeNull();
    expect(uncaptured.map((e) => e.type)).toEqual(['validation', 'validation']);
    expect(uncaptured[1].message).toMatch(/size/i);
  });

  it('keeps each segment to the stack of its time: an inner scope popped, the outer one catches the next', () => {
    const { scopes: job, uncaptured } = scopes();
    job.push('validation');
    job.push('validation');
    job.openSegment();
    job.report({ type: 'validation', message: 'first' });
    job.closeSegment();
    expect(job.pop()?.message).toBe('first');
    job.openSegment();
    badBuffer();
    job.closeSegment();
    expect(job.pop()?.message).toMatch(/MAP_READ|usage/i);
    expect(uncaptured).toEqual([]);
  });

  it('claims nothing raised while no segment of the job is open, and refuses a pop of an empty stack', () => {
    const { scopes: job, uncaptured, errors } = scopes();
    job.openSegment();
    job.closeSegment();
    file.device.pushErrorScope('validation');
    badBuffer();
    const outside = file.device.popErrorScope();
    expect(uncaptured).toEqual([]);
    expect(errors()).toBe(0);
    expect(() => job.pop()).toThrow(/stack is empty/);
    return expect(outside).resolves.not.toBeNull();
  });
});
