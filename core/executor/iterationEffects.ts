/**
 * What a session's iteration state machine (iteration.ts) does to the world: the memory ledger's iteration
 * of the job begins and ends, and the scheduler hears that a grant ended.
 *
 * A class, not closures made per session: the machine's `nonRelease` runs for every command, and optimised code
 * that inlined one session's `beginMemory` was thrown away at the next job ("wrong call target").
 */
import type { MemoryManager } from '../memory/memoryManager.js';
import type { IterationEffects } from './iteration.js';

/** Where a finished grant is reported (the session's host). */
export interface GrantSink {
  finishIteration(elapsedMs: number, counted: boolean): void;
}

export class JobIterationEffects implements IterationEffects {
  constructor(private readonly jobId: string, private readonly memory: MemoryManager, private readonly host: GrantSink) {}

  beginMemory(): void {
    this.memory.beginIteration(this.jobId);
  }

  endMemory(): void {
    this.memory.endIteration(this.jobId);
  }

  finish(elapsedMs: number, counted: boolean): void {
    this.host.finishIteration(elapsedMs, counted);
  }
}
