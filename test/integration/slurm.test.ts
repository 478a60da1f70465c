/**
 * Slurm places jobs, Salus shares each node's GPU (issue 12), for real: a
 * two-node Slurm cluster on this machine (test/helpers/slurmCluster.ts), a
 * `salus serve` per node, and jobs handed to Slurm with `salus submit --slurm`.
 * Two jobs share node1's service at the same time and compute what the same job
 * computes alone; a third lands on node2 through a per-node socket pattern; a
 * job that finds no service fails at once, naming the node and the socket; and
 * `salus jobs --cluster` and `salus kill slurm:ID` go through Slurm. Skipped only
 * where Slurm's programs are not installed (CI installs them: .ci/run).
 */
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { slurmMissing, startSlurmCluster, type SlurmCluster } from '../helpers/slurmCluster.js';
import { lastJson, ROOT, SALUS_BIN, startService, type TestService } from '../helpers/service.js';
import type { ClusterJob } from '../../core/cluster/clusterJobs.js';
import type { NodeMemory } from '../../core/cluster/nodeMemory.js';

const WGSL = join(ROOT, 'assets', 'jobs', 'wgsl-train.js');
// Long enough (a few seconds here) for two jobs Slurm starts together to overlap on the service.
const JOB_ARGS = ['--iterations', '800', '--log-every', '400'];
const missing = slurmMissing();
if (missing) console.warn(`skipping the Slurm tests: ${missing}`);
const restMissing = missing ?? slurmMissing(['slurmrestd']);
if (restMissing && !missing) console.warn(`skipping the slurmrestd test: ${restMissing}`);

describe.skipIf(missing !== null)('salus submit on a real Slurm cluster', () => {
  let cluster: SlurmCluster;
  let node1: TestService;
  let node2: TestService;
  let outDir: string;
  let socketPattern: string;
  const saved = { SLURM_CONF: process.env.SLURM_CONF, PATH: process.env.PATH };

  beforeAll(async () => {
    cluster = await startSlurmCluster({ nodes: ['node1', 'node2'], shards: 8, gpuMemory: { node1: '256MiB', node2: '128MiB' }, partitionPerNode: true, rest: !restMissing });
    // The CLI the services' helpers spawn (and the jobs sbatch starts, which inherit its environment) talk to this cluster.
    process.env.SLURM_CONF = cluster.env.SLURM_CONF;
    process.env.PATH = cluster.env.PATH;
    [node1, node2] = await Promise.all([
      startService(['--memory', '256MiB'], { SLURMD_NODENAME: 'node1' }),
      startService(['--memory', '256MiB'], { SLURMD_NODENAME: 'node2' }),
    ]);
    outDir = join(cluster.dir, 'out');
    mkdirSync(join(cluster.dir, 'sockets'));
    mkdirSync(outDir);
    // A shared folder of each node's socket, as a site might keep them: salus-<node>.sock.
    socketPattern = join(cluster.dir, 'sockets', 'salus-%n.sock');
    symlinkSync(node1.socketPath, socketPattern.replace('%n', 'node1'));
    symlinkSync(node2.socketPath, socketPattern.replace('%n', 'node2'));
  }, 60_000);

  afterAll(async () => {
    await Promise.all([node1?.stop(), node2?.stop()]);
    await cluster?.stop();
    Object.assign(process.env, saved);
  });

  /** `salus submit --slurm ARGS` through node1's CLI environment; resolves with Slurm's job id. */
  async function submit(args: string[]): Promise<string> {
    const result = await node1.cli(['submit', '--slurm', '--output', join(outDir, '%x-%j.out'), ...args]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^\d+\n$/);
    return result.stdout.trim();
  }

  const output = (name: string, id: string) => readFileSync(join(outDir, `${name}-${id}.out`), 'utf8');

  it('each service says its node', async () => {
    const connection = await node2.control();
    expect((await connection.call<{ node: string }>('snapshot')).node).toBe('node2');
  });

  it('runs two jobs on one node\'s service together, one on the other node, with the right results', async () => {
    const hints = ['--persistent', '64KiB', '--ephemeral', '64KiB', '--iterations', '800'];
    const submitted = await Promise.all([
      submit(['--name', 'slurm-a', '--partition', 'node1', ...hints, WGSL, '--', ...JOB_ARGS]),
      submit(['--name', 'slurm-b', '--partition', 'node1', ...hints, WGSL, '--', ...JOB_ARGS]),
      submit(['--name', 'slurm-c', '--partition', 'node2', '--socket', socketPattern, WGSL, '--', ...JOB_ARGS]),
    ]);
    const [a, b, c] = submitted;
    await cluster.waitIdle(60_000);

    // node1's service ran a and b (found through SALUS_SOCKET, which sbatch carried over), at the same time.
    const jobs1 = await node1.json<any[]>(['jobs']);
    const [jobA, jobB] = ['slurm-a', 'slurm-b'].map((name) => jobs1.find((job) => job.name === name));
    expect(jobA?.state, JSON.stringify(jobs1)).toBe('done');
    expect(jobB?.state).toBe('done');
    expect(jobA.iterations).toEqual({ done: 800, total: 800 });
    expect(jobA.startedAt).toBeLessThan(jobB.finishedAt);
    expect(jobB.startedAt).toBeLessThan(jobA.finishedAt);
    expect(jobs1.some((job) => job.name === 'slurm-c')).toBe(false);
    // node2's service ran c, through the socket pattern's %n.
    const jobs2 = await node2.json<any[]>(['jobs']);
    expect(jobs2.map((job) => [job.name, job.state])).toEqual([['slurm-c', 'done']]);

    // The same job run directly on the service computes the same numbers.
    const reference = lastJson((await node1.startJob([WGSL, '--', ...JOB_ARGS]).done).stdout).final;
    for (const [name, id, node] of [['slurm-a', a, 'node1'], ['slurm-b', b, 'node1'], ['slurm-c', c, 'node2']]) {
      const text = output(name, id);
      expect(text).toContain(`salus: Slurm job ${id} on node ${node}`);
      expect(lastJson(text).final, text).toEqual(reference);
    }

    // salus jobs --cluster: Slurm's view, with Slurm's ids and nodes.
    const listed = await node1.json<ClusterJob[]>(['jobs', '--cluster']);
    const rows = listed.filter((job) => submitted.includes(job.slurmJobId)).map((job) => [job.slurmJobId, job.name, job.node, job.state, job.exitCode]);
    // Oldest first; the three were submitted at once, so in any order.
    const expected = [[a, 'slurm-a', 'node1', 'COMPLETED', 0], [b, 'slurm-b', 'node1', 'COMPLETED', 0], [c, 'slurm-c', 'node2', 'COMPLETED', 0]];
    expect(rows).toEqual(expected.sort((x, y) => Number(x[0]) - Number(y[0])));
    const table = (await node1.cli(['jobs', '--cluster'])).stdout;
    expect(table).toMatch(new RegExp(`^${a}\\s+slurm-a\\s+COMPLETED\\s+node1\\s`, 'm'));
  }, 90_000);

  it('the panel\'s clusterJobs (a control call, as the bridge makes it) lists what salus jobs --cluster does', async () => {
    const control = await node1.control();
    const answer = await control.call<{ available: boolean; jobs: ClusterJob[] }>('clusterJobs');
    expect(answer.available).toBe(true);
    expect(answer.jobs.map((job) => job.slurmJobId)).toEqual((await node1.json<ClusterJob[]>(['jobs', '--cluster'])).map((job) => job.slurmJobId));
    await expect(control.call('killClusterJob', 'all')).rejects.toThrow(/Slurm job id/);
  });

  it('salus memory --cluster reads each node\'s memory map from its service, and says which it cannot reach', async () => {
    const maps = await node1.json<NodeMemory[]>(['memory', '--cluster', '--socket', socketPattern]);
    expect(maps.map((entry) => [entry.node, entry.serviceNode, entry.memory?.capacityBytes, entry.error])).toEqual([
      ['node1', 'node1', 256 * 1024 * 1024, null], ['node2', 'node2', 256 * 1024 * 1024, null],
    ]);
    // Only node1's socket where this pattern looks.
    mkdirSync(join(cluster.dir, 'some'));
    symlinkSync(node1.socketPath, join(cluster.dir, 'some', 'node1.sock'));
    const text = await node1.cli(['memory', '--cluster', '--socket', join(cluster.dir, 'some', '%n.sock')]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^node1: .* of 256 MiB used/m);
    expect(text.stdout).toContain(`node2: no Salus service is listening at ${join(cluster.dir, 'some', 'node2.sock')}`);
  });

  it('a job that finds no service on its node fails at once, naming the node and the socket', async () => {
    const started = Date.now();
    const id = await submit(['--name', 'orphan', '--partition', 'node2', '--socket', join(cluster.dir, 'none', 'salus-%n.sock'), WGSL]);
    await cluster.waitIdle(30_000);
    expect(Date.now() - started).toBeLessThan(15_000);
    const text = output('orphan', id);
    expect(text).toContain(`salus: Slurm job ${id} on node node2, Salus service at ${join(cluster.dir, 'none', 'salus-node2.sock')}`);
    expect(text).toContain(`no Salus service is listening at ${join(cluster.dir, 'none', 'salus-node2.sock')}`);
    expect(text).toContain(`salus: Slurm job ${id} on node node2 failed (exit code 1)`);
    const job = (await node1.json<ClusterJob[]>(['jobs', '--cluster'])).find((j) => j.slurmJobId === id);
    expect([job?.state, job?.exitCode]).toEqual(['FAILED', 1]);
  });

  it('sizes the GPU share from the hints, keeps a job off GPUs too small for it, and refuses what fits no node', async () => {
    // node1: 256 MiB in 8 shards (32 MiB each); node2: 128 MiB (16 MiB each). 40 + 30 MiB need 3 there, 5 here.
    const printed = await node1.cli(['submit', '--slurm', '--print', '--persistent', '40MiB', '--ephemeral', '30MiB', WGSL]);
    expect(printed.code, printed.stderr).toBe(0);
    expect(printed.stdout).toContain('#SBATCH --gres=shard:5\n');
    expect(printed.stdout).toContain('#SBATCH --comment=salus\n');
    expect(printed.stdout).not.toContain('--constraint');
    // 150 MiB fits only node1's GPU: Slurm is told so, and puts it there though the partition has both.
    const submitted = await node1.cli(['submit', '--slurm', '--output', join(outDir, '%x-%j.out'), '--name', 'big', '--persistent', '150MiB', WGSL, '--', '--iterations', '20']);
    expect(submitted.code, submitted.stderr).toBe(0);
    const id = submitted.stdout.trim();
    expect(submitted.stderr).toContain(`Slurm job ${id} asks for --gres=shard:5 (150 MiB of hints over each node's GPU memory / shards per GPU; only on nodes with gpumem_256MiB)`);
    expect(cluster.run('squeue', ['-h', '-j', id, '-o', '%f']).stdout.trim()).toBe('gpumem_256MiB');
    await cluster.waitIdle(30_000);
    const big = (await node1.json<ClusterJob[]>(['jobs', '--cluster'])).find((job) => job.slurmJobId === id);
    expect([big?.node, big?.state]).toEqual(['node1', 'COMPLETED']);
    expect(output('big', id)).toContain('"final"');
    const tooBig = await node1.cli(['submit', '--slurm', '--persistent', '2GiB', WGSL]);
    expect(tooBig.code).toBe(1);
    expect(tooBig.stderr).toContain("salus: the job's hints (2 GiB of persistent + ephemeral memory) exceed the GPU of every node of the cluster (the largest: node1, 256 MiB)");
    // sbatch's own refusal, relayed.
    const refused = await node1.cli(['submit', '--slurm', '--time', 'soon', WGSL]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^salus: sbatch failed \(exit code \d+\): sbatch: error: Invalid --time specification$/m);
  });

  it('salus kill slurm:ID cancels the Slurm job, and its job on the service ends', async () => {
    const id = await submit(['--name', 'long', '--partition', 'node2', '--socket', socketPattern, WGSL, '--', '--iterations', '1000000']);
    await node2.waitForJobs((jobs) => jobs.some((job) => job.name === 'long' && job.state === 'running'));
    const killed = await node1.cli(['kill', `slurm:${id}`]);
    expect(killed.code, killed.stderr).toBe(0);
    expect(killed.stdout).toBe(`Slurm job ${id} cancelled\n`);
    await cluster.waitIdle(30_000);
    const job = (await node1.json<ClusterJob[]>(['jobs', '--cluster'])).find((j) => j.slurmJobId === id);
    expect(job?.state).toBe('CANCELLED');
    await node2.waitForJobs((jobs) => jobs.some((j) => j.name === 'long' && ['killed', 'failed', 'done'].includes(j.state)), 15_000);
    // A job Slurm does not know is said so (scancel alone would exit 0).
    const unknown = await node1.cli(['kill', 'slurm:987654']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/Slurm has no job 987654/);
  });

  it.skipIf(restMissing !== null)('goes through slurmrestd where one is configured, with no Slurm command on PATH', async () => {
    const env = { ...process.env, PATH: '/nonexistent', SLURM_CONF: '', SALUS_SOCKET: node1.socketPath, SALUS_SLURMRESTD: cluster.restUrl!, SLURM_JWT: cluster.token() };
    const salus = (args: string[], extra: NodeJS.ProcessEnv = {}) => new Promise<{ code: number | null; stdout: string; stderr: string }>((resolveRun) => {
      const child = spawn(process.execPath, [SALUS_BIN, ...args], { env: { ...env, ...extra } });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => { stdout += d; });
      child.stderr.on('data', (d: Buffer) => { stderr += d; });
      child.on('close', (code) => resolveRun({ code, stdout, stderr }));
    });
    const submitted = await salus(['submit', '--slurm', '--partition', 'node1', '--name', 'rest-a', '--time', '0:05:00', '--output', join(outDir, '%x-%j.out'),
      '--persistent', '200MiB', WGSL, '--', '--iterations', '50']);
    expect(submitted.code, submitted.stderr).toBe(0);
    const id = submitted.stdout.trim();
    expect(submitted.stderr).toContain(`Slurm job ${id} asks for --gres=shard:7`);
    await cluster.waitIdle(30_000);
    const text = output('rest-a', id);
    expect(text).toContain(`salus: Slurm job ${id} on node node1`);
    expect(lastJson(text).final.checksum, text).toBeTypeOf('number');
    expect((await node1.json<any[]>(['jobs'])).find((job) => job.name === 'rest-a')?.state).toBe('done');
    const listed = await salus(['jobs', '--cluster', '--json']);
    expect(listed.code, listed.stderr).toBe(0);
    const row = (JSON.parse(listed.stdout) as ClusterJob[]).find((job) => job.slurmJobId === id);
    expect([row?.name, row?.node, row?.state, row?.exitCode]).toEqual(['rest-a', 'node1', 'COMPLETED', 0]);

    const long = await salus(['submit', '--slurm', '--partition', 'node1', '--name', 'rest-long', '--output', join(outDir, '%x-%j.out'), WGSL, '--', '--iterations', '1000000']);
    expect(long.code, long.stderr).toBe(0);
    await node1.waitForJobs((jobs) => jobs.some((job) => job.name === 'rest-long' && job.state === 'running'));
    const killed = await salus(['kill', `slurm:${long.stdout.trim()}`]);
    expect(killed.code, killed.stderr).toBe(0);
    await cluster.waitIdle(30_000);
    const after = JSON.parse((await salus(['jobs', '--cluster', '--json'])).stdout) as ClusterJob[];
    expect(after.find((job) => job.slurmJobId === long.stdout.trim())?.state).toBe('CANCELLED');

    const badToken = await salus(['submit', '--slurm', WGSL], { SLURM_JWT: 'not-a-token' });
    expect(badToken.code).toBe(1);
    expect(badToken.stderr).toMatch(/^salus: slurmrestd: GET \/nodes: .* \(HTTP \d+/);
  }, 60_000);

  it('without Slurm on PATH, --slurm says so; without --slurm, the local service runs the job', async () => {
    const env = { ...process.env, PATH: '/nonexistent', SALUS_SOCKET: node1.socketPath };
    const refused = spawnSync(process.execPath, [SALUS_BIN, 'submit', '--slurm', WGSL], { env, encoding: 'utf8' });
    expect(refused.status).toBe(1);
    expect(refused.stderr).toBe('salus: Slurm not found (no `sbatch` on PATH): install slurm-client or drop --slurm\n');
    const local = spawnSync(process.execPath, [SALUS_BIN, 'submit', '--name', 'no-slurm', WGSL, '--', '--iterations', '20'], { env, encoding: 'utf8' });
    expect(local.status, local.stderr).toBe(0);
    const jobId = local.stdout.trim();
    expect(jobId).toMatch(/^job-\d+$/);
    await node1.waitForJobs((jobs) => jobs.some((job) => job.id === jobId && job.name === 'no-slurm' && job.state === 'done'));
  });
});

describe.skipIf(missing !== null)('the Slurm prolog of docs/slurm.md (assets/slurm/prolog.sh)', () => {
  let cluster: SlurmCluster;
  let dir: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'salus-prolog-'));
    chmodSync(dir, 0o755);
    // What a site puts in /etc/default/salus-slurm, here beside the prolog.
    const prolog = join(dir, 'prolog.sh');
    writeFileSync(prolog, `#!/bin/bash
export SALUS_COMMAND='${process.execPath} ${SALUS_BIN}' SALUS_RUN_DIR='${join(dir, 'run')}'
export SALUS_SERVE_FLAGS='--memory 256MiB --data-dir ${join(dir, 'data')}'
exec '${join(ROOT, 'assets', 'slurm', 'prolog.sh')}'
`, { mode: 0o755 });
    cluster = await startSlurmCluster({ nodes: ['gpu1'], shards: 4, prolog });
    env = { ...cluster.env, SALUS_SOCKET: '' };
  }, 60_000);

  afterAll(async () => {
    // The service the prolog started (its pid beside its socket).
    const pidFile = join(dir, 'run', userInfo().username, 'service.pid');
    if (existsSync(pidFile)) {
      const pid = Number(readFileSync(pidFile, 'utf8'));
      try {
        process.kill(pid, 'SIGTERM');
        for (let i = 0; i < 100 && existsSync(`/proc/${pid}`); i++) await new Promise((r) => setTimeout(r, 50));
      } catch {
        // Already gone.
      }
    }
    await cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('starts the job user\'s service on the node, once, for two jobs that arrive together', async () => {
    const socket = join(dir, 'run', '%u', 'salus.sock');
    const submit = (name: string) => {
      const result = spawnSync(process.execPath, [SALUS_BIN, 'submit', '--slurm', '--name', name, '--socket', socket, '--output', join(dir, '%x-%j.out'),
        WGSL, '--', '--iterations', '50'], { env, encoding: 'utf8' });
      expect(result.status, result.stderr).toBe(0);
      return result.stdout.trim();
    };
    const ids = [submit('prolog-a'), submit('prolog-b')];
    await cluster.waitIdle(60_000);
    for (const [name, id] of [['prolog-a', ids[0]], ['prolog-b', ids[1]]]) {
      const text = readFileSync(join(dir, `${name}-${id}.out`), 'utf8');
      expect(text).toContain(`on node gpu1, Salus service at ${join(dir, 'run', userInfo().username, 'salus.sock')}`);
      expect(lastJson(text).final.checksum, text).toBeTypeOf('number');
    }
    const serviceSocket = join(dir, 'run', userInfo().username, 'salus.sock');
    const jobs = spawnSync(process.execPath, [SALUS_BIN, 'jobs', '--json', '--socket', serviceSocket], { env, encoding: 'utf8' });
    expect(jobs.status, jobs.stderr).toBe(0);
    expect(JSON.parse(jobs.stdout).map((job: any) => [job.name, job.state]).sort()).toEqual([['prolog-a', 'done'], ['prolog-b', 'done']]);
  }, 90_000);
});
