import { describe, expect, it } from 'vitest';
import { ObjectTable, ReplayError, type Entry } from '../../../core/executor/objects.js';

/** A shader module entry: the table never calls into `obj`, so a plain object stands in for the GPU's. */
const module = (): Entry => ({ kind: 'shaderModule', obj: {} as GPUShaderModule });
const encoder = (): Entry => ({ kind: 'commandEncoder', obj: {} as GPUCommandEncoder, used: new Set(), error: null, passes: [] });

describe('ObjectTable', () => {
  it('finds entries by id across pages, and counts the live ones', () => {
    const table = new ObjectTable();
    const ids = [1, 2, 255, 256, 257, 70_000, 2 ** 24 - 1];
    const entries = ids.map((id) => {
      const entry = module();
      table.set(id, entry);
      return entry;
    });
    ids.forEach((id, i) => expect(table.peek(id)).toBe(entries[i]));
    expect(table.size).toBe(ids.length);
    expect(table.peek(3)).toBeUndefined();
    expect(table.peek(258)).toBeUndefined();
    expect([...table.values()]).toHaveLength(ids.length);
    expect(table.idsOf(1)).toEqual(ids);
  });

  it('keeps ids a broken client might send apart from the paged ones (no two ids share a slot)', () => {
    const table = new ObjectTable();
    const one = module();
    table.set(1, one);
    for (const odd of [1.5, -1, 2 ** 24, 2 ** 32 - 1, 2 ** 32 + 1, 0]) {
      const entry = module();
      table.set(odd, entry);
      expect(table.peek(odd)).toBe(entry);
    }
    expect(table.peek(1)).toBe(one);
    expect(table.size).toBe(7);
    table.delete(1.5);
    expect(table.peek(1.5)).toBeUndefined();
    expect(table.peek(1)).toBe(one);
    expect(table.size).toBe(6);
  });

  it('forgets released ids, and counts an id set twice once', () => {
    const table = new ObjectTable();
    for (let id = 1; id <= 1000; id++) table.set(id, module());
    table.invalidate(5, 'buffer', 'out of memory');
    expect(table.size).toBe(1000);
    for (let id = 1; id <= 1000; id++) if (id !== 600) table.delete(id);
    expect(table.size).toBe(1);
    expect(table.has(5)).toBe(false);
    expect(table.has(600)).toBe(true);
    expect([...table.values()]).toHaveLength(1);
    table.delete(600);
    table.delete(600);
    expect(table.size).toBe(0);
    expect([...table.values()]).toEqual([]);
  });

  it('says what is wrong with an id of the wrong kind, an invalid one and a released one', () => {
    const table = new ObjectTable();
    table.set(7, module());
    table.invalidate(8, 'buffer', 'too large');
    expect(() => table.get(7, 'buffer')).toThrow(new ReplayError('id 7 is a GPUShaderModule, not a GPUBuffer'));
    expect(() => table.get(8, 'buffer')).toThrow('invalid GPUBuffer (id 8) used: too large');
    table.delete(7);
    expect(() => table.get(7, 'shaderModule')).toThrow('GPUShaderModule id 7 does not exist in this job');
  });

  it('gets an entry only as its kind and on its device, wherever its id lives, and follows a replaced id', () => {
    const table = new ObjectTable();
    for (const id of [3, 2 ** 24 - 1, 2 ** 24, 2 ** 32 - 1, 1.5]) {
      const entry = module();
      table.set(id, entry);
      expect(table.get(id, 'shaderModule')).toBe(entry);
      expect(table.deviceOf(id)).toBe(1);
      expect(Object.keys(entry)).toEqual(['kind', 'obj']);
      expect(() => table.get(id, 'computePass')).toThrow(`id ${id} is a GPUShaderModule, not a GPUComputePassEncoder`);
      table.deviceId = 2;
      expect(table.idsOf(2)).toEqual([]);
      expect(() => table.get(id, 'shaderModule')).toThrow(`[GPUShaderModule id ${id}] is associated with the job's device 1, and cannot be used with its device 2`);
      table.deviceId = 1;
      table.invalidate(id, 'shaderModule', 'bad code');
      expect(() => table.get(id, 'shaderModule')).toThrow(`invalid GPUShaderModule (id ${id}) used: bad code`);
      table.delete(id);
      expect(table.deviceOf(id)).toBeUndefined();
      expect(() => table.get(id, 'shaderModule')).toThrow(`GPUShaderModule id ${id} does not exist in this job`);
      const next = encoder();
      table.set(id, next);
      expect(table.get(id, 'commandEncoder')).toBe(next);
      expect(() => table.get(id, 'shaderModule')).toThrow('not a GPUShaderModule');
    }
  });

  it('reads the current device\'s dispatch limit once per device (Infinity when it declared none)', () => {
    const table = new ObjectTable();
    expect(table.maxWorkgroupsPerDimension).toBe(Infinity);
    table.device = { features: new Set(), limits: { maxComputeWorkgroupsPerDimension: 1000 } };
    expect(table.maxWorkgroupsPerDimension).toBe(1000);
    table.device = { features: new Set(), limits: {} };
    expect(table.maxWorkgroupsPerDimension).toBe(Infinity);
  });

  it('stops treating a replaced or released encoder as recording its buffers', () => {
    const table = new ObjectTable();
    const first = encoder();
    const buffer = { kind: 'buffer' } as Entry & { kind: 'buffer' };
    (first as { used: Set<unknown> }).used.add(buffer);
    table.set(300, first);
    expect(table.isRecorded(buffer)).toBe(true);
    table.invalidate(300, 'commandEncoder', 'replaced');
    expect(table.isRecorded(buffer)).toBe(false);
    table.set(301, first);
    expect(table.recordedBuffers().has(buffer)).toBe(true);
    table.delete(301);
    expect(table.recordedBuffers().size).toBe(0);
  });
});
