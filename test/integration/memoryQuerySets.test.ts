/**
 * Query sets are GPU memory too (issue 9, "memory exactness holds everywhere"):
 * each counts 8 bytes a query against its job in the ledger, shows in `salus
 * memory --json`, returns on destroy and when the job ends, and one past the
 * job's room is an out-of-memory error as a buffer would be. A set Dawn rejects
 * (more than 4096 queries) holds nothing and is not counted.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, lastJson, startServicePerTest, type TestService } from '../helpers/service.js';
import { atPhase, endsClean } from '../helpers/gatedJob.js';

const QUERY_SETS = join(ROOT, 'test/fixtures/jobs/querySets.js');
const MiB = 1024 * 1024;
let service: TestService | null = null;
const startService = startServicePerTest();


describe('query sets in the memory ledger', () => {
  it('counts each against its job, gives it back on destroy and at the end, and leaves out the ones Dawn rejects', async () => {
    service = await startService(['--memory', '64MiB']);
    const gate = mkdtempSync(join(tmpdir(), 'salus-gate-'));
    const job = service.startJob(['--name', 'queries', QUERY_SETS, '--', '--gate', gate]);

    const created = await atPhase(service, job, gate, 'created');
    const timestampBytes = created.facts.timestamps ? 16 : 0;
    expect(created.memory.jobs).toHaveLength(1);
    expect(created.memory.jobs[0]).toMatchObject({ persistentBytes: 4096 * 8 + timestampBytes, querySetBytes: 4096 * 8 + timestampBytes });
    expect(created.memory.usedBytes).toBe(created.memory.lanes.reduce((sum: number, lane: any) => sum + lane.sizeBytes, 4096 * 8 + timestampBytes));
    created.release();

    const destroyed = await atPhase(service, job, gate, 'destroyed');
    expect(destroyed.memory.jobs[0]).toMatchObject({ persistentBytes: timestampBytes, querySetBytes: timestampBytes });
    destroyed.release();

    const invalid = await atPhase(service, job, gate, 'invalid');
    expect(invalid.facts.error).toBe('validation');
    expect(invalid.memory.jobs[0]).toMatchObject({ persistentBytes: timestampBytes, querySetBytes: timestampBytes });
    invalid.release();

    expect(lastJson(await endsClean(service, job))).toEqual({ done: true });
  }, 60_000);

  it('is an out-of-memory error past the job\'s room, as a buffer is, and the set it did not make cannot be used', async () => {
    service = await startService(['--memory', '1MiB']);
    const gate = mkdtempSync(join(tmpdir(), 'salus-gate-'));
    // The fill and the 16-byte resolve buffer leave 16 bytes: room for 2 queries, not 4096.
    const job = service.startJob(['--name', 'full', QUERY_SETS, '--', '--gate', gate, '--fill', String(MiB - 32)]);
    const full = await atPhase(service, job, gate, 'full');
    expect(full.facts).toMatchObject({ big: 'out-of-memory', use: 'validation', small: null });
    expect(full.facts.bigMessage).toMatch(/out of memory: job \S+ asked for a query set of 32 KiB/);
    expect(full.memory.jobs[0]).toMatchObject({ persistentBytes: MiB, querySetBytes: 16 });
    expect(full.memory.freeBytes).toBe(0);
    full.release();
    await endsClean(service, job);
  }, 60_000);
});
