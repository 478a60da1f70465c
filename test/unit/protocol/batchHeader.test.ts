import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { readBatchHeader } from '../../../core/protocol/batchHeader.js';
import { jobMessageSchema } from '../../../core/protocol/messages.js';

/** Values a hostile job may put in a batch header's fields. */
const fieldValue = fc.oneof(
  fc.constantFrom(0, 1, -1, 0.5, 0xffffffff, 2 ** 32, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER + 1, NaN, Infinity, -0),
  fc.nat(), fc.double(), fc.string({ maxLength: 4 }), fc.boolean(), fc.constant(null), fc.constant(undefined), fc.array(fc.nat(), { maxLength: 2 }),
);

const header = fc.oneof(
  fc.record({ t: fc.constantFrom('batch', 'batch ', 'hints', 'goodbye'), commandBytes: fieldValue, scratchBytes: fieldValue, extra: fieldValue }, { requiredKeys: ['t'] }),
  fc.constantFrom(null, 'batch', 7, [], { t: 'batch' }),
);

describe('readBatchHeader', () => {
  it('accepts exactly the batch headers jobMessageSchema accepts, with the same fields', () => {
    fc.assert(fc.property(header, (h) => {
      const fast = readBatchHeader(h);
      const parsed = jobMessageSchema.safeParse(h);
      const schemaBatch = parsed.success && parsed.data.t === 'batch' ? parsed.data : null;
      expect(fast).toEqual(schemaBatch);
    }), { numRuns: 5000 });
  });

  it('keeps the bounds of each field', () => {
    expect(readBatchHeader({ t: 'batch', commandBytes: 0xffffffff })).toEqual({ t: 'batch', commandBytes: 0xffffffff });
    expect(readBatchHeader({ t: 'batch', commandBytes: 2 ** 32 })).toBeNull();
    expect(readBatchHeader({ t: 'batch', commandBytes: 8, scratchBytes: Number.MAX_SAFE_INTEGER + 1 })).toBeNull();
    expect(readBatchHeader({ t: 'batch', commandBytes: 8, scratchBytes: 3, hints: {} })).toEqual({ t: 'batch', commandBytes: 8, scratchBytes: 3 });
  });
});
