import { asServiceWork } from './errorScopes.js';

/**
 * Measures an iteration's span on the GPU's own clock with timestamp queries:
 * an empty compute pass placed before the iteration's first submitted work writes
 * a timestamp, another one after its last work writes the end, and the difference is read back once the iteration's work is
 * done. Where the adapter has no `timestamp-query`, or a reading is unusable,
 * callers fall back to wall time. The few bytes it uses belong to the service,
 * not to any job's ledger.
 */
export class IterationTimer {
  private readonly querySet: GPUQuerySet;
  private readonly resolve: GPUBuffer;
  private readonly readback: GPUBuffer;
  /** Between `begin` and `end`: an iteration is being timed. */
  private busy = false;
  private pendingBegin = false;
  private began = false;
  /** The span being read back, once the end is marked. */
  private reading: Promise<number | null> | null = null;
  /** The last reading started and not finished: the readback buffer is mapped by one reading at a time. */
  private inFlight: Promise<number | null> | null = null;
  /** The end stamp and its copy to the readback buffer rode in a submit of the job (`takeEndCommands`): reading only maps. */
  private endSubmitted = false;
  /** Between `takeEndCommands` and the `reopen` of the submit that carried them. */
  private carrying = false;
  /** The stamps of the last reading (a fresh buffer reads zeros). */
  private lastStart = 0n;
  private lastEnd = 0n;
  /** The start stamp before this iteration's: reading it again means the begin stamp was not written. */
  private previousStart = 0n;
  /** The job's submits in the iteration being timed, and in the one timed before it (0: none or unknown). */
  private submits = 0;
  private submitsBefore = 0;

  private constructor(private readonly device: GPUDevice) {
    this.querySet = device.createQuerySet({ type: 'timestamp', count: 2, label: 'salus iteration timer' });
    this.resolve = device.createBuffer({ size: 16, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC, label: 'salus iteration timer' });
    this.readback = device.createBuffer({ size: 16, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST, label: 'salus iteration timer readback' });
  }

  /** A timer for `device`, or null when the device cannot write timestamps. */
  static create(device: GPUDevice): IterationTimer | null {
    return device.features.has('timestamp-query') ? new IterationTimer(device) : null;
  }

  /**
   * Starts timing an iteration. The start stamp is written by the job's first
   * submit of the iteration (see `takeBeginCommands`), so timing adds no submit
   * of its own at the start.
   */
  begin(): void {
    if (this.busy) return;
    this.busy = true;
    this.pendingBegin = true;
    this.began = false;
    this.previousStart = this.lastStart;
    this.submits = 0;
  }

  /** Command buffers to put before the job's own in its next submit (once per iteration). */
  takeBeginCommands(): GPUCommandBuffer[] {
    if (!this.pendingBegin) return [];
    this.pendingBegin = false;
    this.began = true;
    const encoder = this.device.createCommandEncoder({ label: 'salus iteration timer' });
    encoder.beginComputePass({ timestampWrites: { querySet: this.querySet, beginningOfPassWriteIndex: 0 } }).end();
    return [encoder.finish()];
  }

  /**
   * Command buffers to put after the job's own in each submit of the iteration (the session asks at every one):
   * they write the end stamp and copy the span to the readback buffer, so that `markEnd` needs no submit of its
   * own. They ride the submit that a sync point follows in the same batch (`syncFollows`), and, since a job's
   * client flushes a batch at every submit, mostly a sync point comes in a later batch: so they also ride the
   * iteration's n-th submit where the iteration timed before made n (a training step or a request submits alike
   * each time). A guess that was early costs what no guess costs: the next submit reopens the iteration and the
   * sync point stamps the end with a submit of its own. Empty for other submits, and unless the iteration is
   * timed, its start stamp was written, and no reading holds the readback buffer (a copy into a mapped buffer
   * would fail the job's submit).
   */
  takeEndCommands(syncFollows = true): GPUCommandBuffer[] {
    if (!this.busy) return [];
    this.submits++;
    if (!syncFollows && this.submits !== this.submitsBefore) return [];
    if (!this.began || this.reading || this.inFlight) return [];
    this.endSubmitted = true;
    this.carrying = true;
    return [this.endCommands()];
  }

  /**
   * Marks the end now: writes the end stamp after all work submitted so far and
   * starts reading the span back. Call it at the job's own sync point (before
   * replaying its mapAsync or onSubmittedWorkDone), so the reading comes back in
   * the same completion as the job's and neither the job's next call nor the next
   * iteration waits for it. Later calls (and `end`) return the same reading, unless
   * the job submitted more work in between (`reopen`).
   */
  markEnd(): Promise<number | null> {
    if (!this.busy) return Promise.resolve(null);
    if (!this.reading) {
      const previous = this.inFlight;
      const reading = previous ? previous.then(() => this.read()) : this.read();
      this.reading = reading;
      this.inFlight = reading;
      void reading.then(() => { if (this.inFlight === reading) this.inFlight = null; });
    }
    return this.reading;
  }

  /**
   * The job submitted work after the end was marked, in the same iteration: that
   * reading ends too early, so the next `markEnd` (or `end`) reads again.
   */
  reopen(): void {
    if (this.carrying) {
      // The submit that carried the end stamp: nothing came after it.
      this.carrying = false;
      return;
    }
    this.endSubmitted = false;
    if (this.busy) this.reading = null;
  }

  /**
   * Marks the end (unless `markEnd` did), then resolves once all work so far is
   * done, with the GPU span in milliseconds (null when it could not be measured).
   */
  end(): Promise<number | null> {
    const reading = this.markEnd();
    this.reading = null;
    this.busy = false;
    this.submitsBefore = this.submits;
    return reading;
  }

  /** Writes the end stamp now and reads the span back; never rejects (null: unmeasured). */
  private read(): Promise<number | null> {
    this.pendingBegin = false;
    if (!this.began) {
      // The iteration submitted nothing: no GPU span to measure.
      return this.device.queue.onSubmittedWorkDone().then(() => null, () => null);
    }
    if (this.endSubmitted) {
      this.endSubmitted = false;
      this.carrying = false;
      return this.readBack();
    }
    asServiceWork(this.device, () => this.device.queue.submit([this.endCommands()]));
    return this.readBack();
  }

  /** Writes the end stamp, resolves both stamps and copies them to the readback buffer. */
  private endCommands(): GPUCommandBuffer {
    const encoder = this.device.createCommandEncoder({ label: 'salus iteration timer' });
    encoder.beginComputePass({ timestampWrites: { querySet: this.querySet, endOfPassWriteIndex: 1 } }).end();
    encoder.resolveQuerySet(this.querySet, 0, 2, this.resolve, 0);
    encoder.copyBufferToBuffer(this.resolve, 0, this.readback, 0, 16);
    return encoder.finish();
  }

  /**
   * Maps the stamps the end commands copied. A submit that failed left older stamps there: the end of
   * the last reading, the start of an earlier iteration, or an end no later than the start is no reading.
   */
  private async readBack(): Promise<number | null> {
    try {
      await this.readback.mapAsync(GPUMapMode.READ);
      const [start, end] = new BigUint64Array(this.readback.getMappedRange());
      this.readback.unmap();
      const stale = end === this.lastEnd || start === this.previousStart;
      [this.lastStart, this.lastEnd] = [start, end];
      if (stale || end <= start) return null;
      return Number(end - start) / 1e6;
    } catch {
      return null;
    }
  }

  destroy(): void {
    this.querySet.destroy();
    this.resolve.destroy();
    this.readback.destroy();
  }
}
