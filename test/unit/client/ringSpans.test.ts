/** The job's view of its scratch: uploads freed oldest first as the service reads them, holds until released, first fit. */
import { describe, expect, it } from 'vitest';
import { RingSpans, SPAN_ALIGN_BYTES } from '../../../core/client/ringSpans.js';

describe('RingSpans', () => {
  it('places spans first-fit and aligned, never past the limit', () => {
    const spans = new RingSpans(64);
    expect(spans.addUpload(5)).toBe(0);
    expect(spans.addHold(8)).toBe(SPAN_ALIGN_BYTES);
    expect(spans.addUpload(40)).toBe(16);
    expect(spans.addUpload(9)).toBeNull();
    expect(spans.addUpload(8)).toBe(56);
    expect(spans.addHold(0)).toBeNull();
    expect(spans.addHold(-1)).toBeNull();
  });

  it('frees uploads in the order they were written, as the service reports bytes read', () => {
    const spans = new RingSpans(48);
    spans.addUpload(16);
    spans.addUpload(16);
    spans.addUpload(16);
    spans.consumed(8);
    // Half of the first upload is not the whole of it: nothing is free yet.
    expect(spans.addUpload(8)).toBeNull();
    expect(spans.outstandingBytes).toBe(40);
    spans.consumed(24);
    expect(spans.outstandingBytes).toBe(16);
    expect(spans.addUpload(32)).toBe(0);
  });

  it('keeps a hold until it is released, with uploads reusing the space around it', () => {
    const spans = new RingSpans(64);
    expect(spans.addUpload(16)).toBe(0);
    const hold = spans.addHold(16)!;
    expect(hold).toBe(16);
    expect(spans.isHeld(hold)).toBe(true);
    spans.consumed(16);
    expect(spans.addUpload(16)).toBe(0);
    expect(spans.addUpload(32)).toBe(32);
    spans.consumed(48);
    expect(spans.addUpload(40)).toBeNull();
    spans.release(hold);
    spans.release(hold);
    spans.release(12345);
    expect(spans.isHeld(hold)).toBe(false);
    expect(spans.addUpload(64)).toBe(0);
  });

  it('turns a hold into an upload that the service frees in its turn', () => {
    const spans = new RingSpans(64);
    const hold = spans.addHold(32)!;
    expect(spans.holdToUpload(hold + 8, 8)).toBe(false);
    expect(spans.holdToUpload(hold, 40)).toBe(false);
    spans.addUpload(16);
    expect(spans.holdToUpload(hold, 24)).toBe(true);
    expect(spans.isHeld(hold)).toBe(false);
    // The hold's tail past 24 bytes is free; the upload written before it is read first.
    expect(spans.addUpload(8)).toBe(24);
    spans.consumed(16);
    expect(spans.outstandingBytes).toBe(32);
    spans.consumed(32);
    expect(spans.outstandingBytes).toBe(0);
    expect(spans.addUpload(64)).toBe(0);
  });
});
