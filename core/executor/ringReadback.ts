/**
 * Readbacks through the job's scratch ring: where a job's `mapAsync` or
 * `readMapped` names an offset of its ring (`ring`), the service copies the
 * mapped bytes there, in its own mapping of the ring it made for that job
 * (core/platform/scratchPool.ts), and the reply carries no bytes; the job views
 * them in place (core/client/remote/mappedRanges.ts). One copy in all, against
 * a socket's several. Without `ring` the bytes ride in the reply, as before.
 *
 * The job chooses the offset, because it is the one allocator of its ring (its
 * uploads go there too: core/client/ringSpans.ts). What it names is only ever
 * checked against the ring the service made for it: a bad offset or length is
 * a clear error for that job, and nothing outside its ring is ever written.
 */
import { ReplayError } from './objects.js';
import type { ReplayContext } from './replay.js';

/**
 * Throws ReplayError unless `lengthBytes` at `ring` lie within the job's ring
 * (nothing to check when `ring` is undefined: the bytes go in the reply).
 */
export function checkRingTarget(ctx: ReplayContext, ring: number | undefined, lengthBytes: number): void {
  if (ring === undefined) return;
  const bytes = ctx.ring();
  if (!bytes) throw new ReplayError('this job has no scratch ring to read back into: leave out `ring`, and the bytes come in the reply');
  if (!Number.isSafeInteger(ring) || ring < 0 || ring + lengthBytes > bytes.byteLength) {
    throw new ReplayError(`the job's scratch ring cannot take [${ring}, ${ring + lengthBytes}): it holds ${bytes.byteLength} bytes`);
  }
}

/**
 * Answers `rid` with `result` and the mapped `bytes`: copied to `ring` in the
 * job's ring (the reply then names `ring`), or in the reply. When the ring is
 * gone meanwhile (the job ended), the reply is an error, which nobody hears.
 */
export function sendMappedBytes(ctx: ReplayContext, rid: number, result: object, bytes: Uint8Array, ring: number | undefined): void {
  if (ring === undefined) {
    // Copied: the mapped memory goes away at unmap, and the socket write happens later.
    ctx.reply(rid, result, [bytes.slice()]);
    return;
  }
  try {
    checkRingTarget(ctx, ring, bytes.byteLength);
    ctx.ring()!.set(bytes, ring);
  } catch (error) {
    ctx.replyError(rid, (error as Error).message);
    return;
  }
  ctx.reply(rid, { ...result, ring });
}
