// The executor's iteration state machine on its own: plain calls, no GPU. Each
// transition of the tables in core/executor/iteration.ts, the illegal ones
// included, and the effects (memory ledger, scheduler) each one has.
import { describe, expect, it } from 'vitest';
import { IterationMachine, type IterationPhase } from '../../../core/executor/iteration.js';

/** A machine whose effects are recorded in order. */
function machine(): { m: IterationMachine; effects: string[] } {
  const effects: string[] = [];
  const m = new IterationMachine({
    beginMemory: () => effects.push('beginMemory'),
    endMemory: () => effects.push('endMemory'),
    finish: (elapsedMs, counted) => effects.push(`finish ${elapsedMs} ${counted ? 'counted' : 'uncounted'}`),
  });
  return { m, effects };
}

/** Requests and receives a grant at `nowMs`. */
function grant(m: IterationMachine, nowMs = 0, unmarked = false): void {
  m.grantRequested();
  m.granted(nowMs, unmarked);
}

/** Ends the grant held: the GPU work is done at `nowMs`, unmeasured. */
function end(m: IterationMachine, nowMs = 0): void {
  m.endRequested();
  m.gpuDone(null, nowMs);
}

/** Drives `m` into `phase` (from a fresh machine). */
function reach(m: IterationMachine, phase: IterationPhase): void {
  if (phase === 'idle') return;
  if (phase === 'closed') return m.close();
  m.grantRequested();
  if (phase === 'awaitingGrant') return;
  m.granted(0);
  if (phase === 'running') return;
  m.endRequested();
  if (phase === 'settled') m.settle(1);
}

describe('scheduling side', () => {
  it('starts idle, inferred, with no memory iteration', () => {
    const { m, effects } = machine();
    expect([m.phase, m.source, m.memoryPhase, m.running]).toEqual(['idle', 'inferred', 'none', false]);
    expect(effects).toEqual([]);
  });

  it('idle → awaitingGrant → running → ending → idle, finishing with the GPU span', () => {
    const { m, effects } = machine();
    m.grantRequested();
    expect([m.phase, m.running]).toEqual(['awaitingGrant', false]);
    m.granted(100);
    expect([m.phase, m.running, m.memoryPhase]).toEqual(['running', true, 'pending']);
    m.submitted();
    m.dispatched();
    m.syncPoint();
    m.endRequested();
    expect([m.phase, m.running]).toEqual(['ending', true]);
    m.gpuDone(3, 110);
    expect([m.phase, m.running]).toEqual(['idle', false]);
    expect(effects).toEqual(['finish 3 counted']);
  });

  it('a refused grant goes back to idle and may be asked again', () => {
    const { m } = machine();
    m.grantRequested();
    m.grantRefused();
    expect(m.phase).toBe('idle');
    grant(m);
    expect(m.phase).toBe('running');
  });

  it('uses the wall time when the GPU span is unmeasured or longer than the wall time', () => {
    for (const [gpuMs, expected] of [[null, 'finish 10 uncounted'], [50, 'finish 10 uncounted'], [4, 'finish 4 uncounted']] as const) {
      const { m, effects } = machine();
      grant(m, 100);
      m.endRequested();
      m.gpuDone(gpuMs, 110);
      expect(effects).toEqual([expected]);
    }
  });

  it('settle counts an ending iteration at once with its wall time, and its late GPU reading changes nothing', () => {
    const { m, effects } = machine();
    grant(m, 10);
    m.submitted();
    m.dispatched();
    m.syncPoint();
    m.endRequested();
    m.settle(25);
    expect([m.phase, m.running]).toEqual(['settled', false]);
    expect(effects).toEqual(['finish 15 counted']);
    m.gpuDone(1, 30);
    expect(m.phase).toBe('idle');
    expect(effects).toEqual(['finish 15 counted']);
  });

  it('settle is ignored outside ending', () => {
    for (const phase of ['idle', 'awaitingGrant', 'running', 'settled', 'closed'] as const) {
      const { m, effects } = machine();
      reach(m, phase);
      const before = [...effects];
      m.settle(99);
      expect(m.phase).toBe(phase);
      expect(effects).toEqual(before);
    }
  });

  it('ending from idle is a no-op: the GPU is awaited, nothing finishes', () => {
    const { m, effects } = machine();
    m.endRequested();
    expect(m.phase).toBe('idle');
    m.gpuDone(1, 2);
    expect([m.phase, effects]).toEqual(['idle', []]);
  });

  it.each([
    ['grantRequested', ['awaitingGrant', 'running', 'ending', 'settled']],
    ['grantRefused', ['idle', 'running', 'ending', 'settled']],
    ['granted', ['idle', 'running', 'ending', 'settled']],
    ['endRequested', ['awaitingGrant', 'ending', 'settled']],
    ['gpuDone', ['awaitingGrant', 'running']],
  ] as const)('%s is illegal in %j, and changes nothing there', (event, phases) => {
    for (const phase of phases) {
      const { m, effects } = machine();
      reach(m, phase);
      const before = [...effects];
      const call = () => (event === 'granted' ? m.granted(0) : event === 'gpuDone' ? m.gpuDone(null, 0) : m[event]());
      expect(call).toThrow(`iteration state: ${event} is illegal in ${phase}`);
      expect(m.phase).toBe(phase);
      expect(effects).toEqual(before);
    }
  });

  it('after close every event is ignored', () => {
    const { m, effects } = machine();
    grant(m);
    m.close();
    expect([m.phase, m.running]).toEqual(['closed', false]);
    m.grantRequested();
    m.granted(0);
    m.grantRefused();
    m.endRequested();
    m.gpuDone(1, 2);
    m.settle(3);
    m.nonRelease();
    m.settleMemory();
    expect(m.syncPoint()).toBe(false);
    m.close();
    expect(m.phase).toBe('closed');
    expect(effects).toEqual([]);
  });
});

describe('inferred iterations', () => {
  it('a batch with a submit needs a grant outside an iteration only', () => {
    const { m } = machine();
    expect(m.batchNeedsGrant(true)).toBe(true);
    expect(m.batchNeedsGrant(false)).toBe(false);
    grant(m);
    expect(m.batchNeedsGrant(true)).toBe(false);
    expect(m.submitNeedsGrant()).toBe(false);
  });

  it('ends with the batch once it synced after a submit, and counts only if a dispatch came before that sync', () => {
    const { m, effects } = machine();
    grant(m);
    m.startBatch();
    expect(m.syncPoint()).toBe(false); // nothing submitted yet: not the end
    expect(m.batchEnds()).toBe(false);
    m.submitted();
    expect(m.syncPoint()).toBe(true);
    expect(m.batchEnds()).toBe(true);
    end(m);
    expect(effects).toEqual(['finish 0 uncounted']); // a readback alone
    grant(m);
    m.startBatch();
    expect(m.batchEnds()).toBe(false);
    m.dispatched();
    m.submitted();
    m.syncPoint();
    end(m);
    expect(effects.at(-1)).toBe('finish 0 counted');
  });

  it('a dispatch before a sync outside an iteration still counts for the next one that syncs', () => {
    const { m, effects } = machine();
    m.dispatched();
    grant(m);
    m.startBatch();
    m.submitted();
    m.syncPoint();
    end(m);
    expect(effects).toEqual(['finish 0 counted']);
  });

  it('a sync point outside a grant neither ends a batch nor may be marked', () => {
    const { m } = machine();
    m.startBatch();
    m.submitted();
    expect(m.syncPoint()).toBe(false);
    expect(m.batchEnds()).toBe(false);
  });
});

describe('SDK-marked iterations', () => {
  it('marking a begin during an inferred iteration ends it first (counted as inferred), then marks for good', () => {
    const { m, effects } = machine();
    grant(m);
    m.startBatch();
    m.submitted();
    expect(m.endsBeforeMarkedBegin()).toBe(true);
    end(m);
    expect(effects).toEqual(['finish 0 uncounted']); // the inferred one never synced after a dispatch
    m.markedBegin();
    expect([m.source, m.endsBeforeMarkedBegin()]).toEqual(['sdk', false]);
    grant(m);
    expect(m.endsBeforeMarkedBegin()).toBe(false); // a marked iteration does not end at the next begin
    end(m);
    expect(effects.at(-1)).toBe('finish 0 counted'); // an SDK iteration counts without a dispatch
  });

  it('a sync point does not end a marked iteration with the batch, but may mark its timer', () => {
    const { m } = machine();
    m.markedBegin();
    grant(m);
    m.startBatch();
    m.submitted();
    expect(m.syncPoint()).toBe(true);
    expect(m.batchEnds()).toBe(false);
  });

  it('a submit outside marked iterations is granted as unmarked work: uncounted, ending with the batch or at the next begin', () => {
    const { m, effects } = machine();
    m.markedBegin();
    m.startBatch();
    expect(m.submitNeedsGrant()).toBe(true);
    expect(m.batchNeedsGrant(true)).toBe(false); // an SDK job's batch waits for no grant as a whole
    grant(m, 0, true);
    expect(m.batchEnds()).toBe(true);
    expect(m.endsBeforeMarkedBegin()).toBe(true);
    end(m, 5);
    expect(effects).toEqual(['finish 5 uncounted']);
    expect(m.batchEnds()).toBe(false); // no grant held any more
    m.markedBegin();
    expect(m.endsBeforeMarkedBegin()).toBe(false);
    grant(m);
    end(m, 5);
    expect(effects.at(-1)).toBe('finish 5 counted'); // the next grant is an iteration again
  });

  it('the unmarked work of one batch does not carry into the next', () => {
    const { m } = machine();
    m.markedBegin();
    m.startBatch();
    grant(m, 0, true);
    m.startBatch();
    expect(m.batchEnds()).toBe(false);
    expect(m.endsBeforeMarkedBegin()).toBe(false);
  });
});

describe('memory side', () => {
  it('begins at the first non-release command after a grant, and an inferred one ends at the first after the iteration', () => {
    const { m, effects } = machine();
    grant(m);
    expect(m.memoryPhase).toBe('pending');
    m.nonRelease();
    expect([m.memoryPhase, effects]).toEqual(['open', ['beginMemory']]);
    m.nonRelease(); // inside the iteration: stays open
    end(m);
    expect(m.memoryPhase).toBe('open'); // the job frees the iteration's buffers after reading its results
    m.nonRelease();
    expect([m.memoryPhase, effects]).toEqual(['none', ['beginMemory', 'finish 0 uncounted', 'endMemory']]);
    m.nonRelease();
    expect(effects).toHaveLength(3);
  });

  it('a grant while the memory side is open reopens it: the old one ends and the new one begins at the next non-release command', () => {
    const { m, effects } = machine();
    grant(m);
    m.nonRelease();
    end(m);
    grant(m);
    expect(m.memoryPhase).toBe('reopening');
    m.nonRelease();
    expect(m.memoryPhase).toBe('open');
    expect(effects.slice(-2)).toEqual(['endMemory', 'beginMemory']);
  });

  it('a marked iteration ends its memory side with it', () => {
    const { m, effects } = machine();
    m.markedBegin();
    grant(m);
    m.nonRelease();
    end(m);
    expect([m.memoryPhase, effects]).toEqual(['none', ['beginMemory', 'endMemory', 'finish 0 counted']]);
  });

  it('an iteration that ends before its memory side began leaves no memory iteration', () => {
    const { m, effects } = machine();
    grant(m);
    end(m);
    expect(m.memoryPhase).toBe('none');
    m.nonRelease();
    expect(effects).toEqual(['finish 0 uncounted']);
  });

  it('a reopening memory side whose new iteration ends unbegun stays open for the old one', () => {
    const { m } = machine();
    grant(m);
    m.nonRelease();
    end(m);
    grant(m);
    end(m);
    expect(m.memoryPhase).toBe('open');
  });

  it('settleMemory ends an open memory side only outside an iteration, and not one waiting to begin', () => {
    const { m, effects } = machine();
    grant(m);
    m.nonRelease();
    m.settleMemory();
    expect(m.memoryPhase).toBe('open'); // the grant holds
    end(m);
    grant(m);
    m.settleMemory();
    expect(m.memoryPhase).toBe('reopening'); // a new grant waits to begin
    m.nonRelease();
    end(m);
    m.settleMemory();
    expect(m.memoryPhase).toBe('none');
    expect(effects.filter((e) => e === 'endMemory')).toHaveLength(2);
  });

  it('close ends an open memory side, and only an open one', () => {
    const open = machine();
    grant(open.m);
    open.m.nonRelease();
    open.m.close();
    expect(open.effects).toEqual(['beginMemory', 'endMemory']);
    const pending = machine();
    grant(pending.m);
    pending.m.close();
    expect(pending.effects).toEqual([]);
    expect(pending.m.memoryPhase).toBe('none');
  });
});
