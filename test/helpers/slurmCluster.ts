/**
 * Test harness: a real Slurm cluster on this machine, in a temporary folder.
 * `munged` with its own key and socket, `slurmctld` and one `slurmd` per node
 * (each with a port of its own, all on 127.0.0.1), every state, spool and log
 * file in the folder, and no accounting database. Clients find it through
 * `SLURM_CONF` (in `env`). Each node has `Gres=gpu:1` and, with `shards`,
 * `shard:N` (Slurm's sharing of one GPU); `gpuMemory` becomes the node feature
 * `gpumem_SIZE` that `salus submit` reads. Starts in a second or two; `stop()`
 * cancels what still runs and ends the daemons.
 *
 * Needs the slurm-wlm and munge packages and root (slurmd runs jobs as their
 * user); `slurmMissing()` says why a machine cannot.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { hostname, tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';

/** The daemons and clients a cluster needs; the first one missing from PATH (or /usr/sbin). */
const DAEMONS = ['munged', 'slurmctld', 'slurmd'];
const CLIENTS = ['sbatch', 'squeue', 'scancel', 'scontrol', 'sinfo'];

/** PATH plus the sbin folders, where Debian puts the daemons. */
function searchPath(): string {
  return [process.env.PATH ?? '', '/usr/sbin', '/usr/local/sbin', '/sbin'].join(':');
}

/** Why no cluster can start here (a missing program), or null when it can; `programs`: those instead. */
export function slurmMissing(programs = [...DAEMONS, ...CLIENTS]): string | null {
  for (const program of programs) {
    const found = spawnSync('sh', ['-c', `command -v ${program}`], { env: { ...process.env, PATH: searchPath() } });
    if (found.status !== 0) return `${program} is not installed (apt-get install ${program === 'slurmrestd' ? 'slurmrestd' : 'slurm-wlm munge'})`;
  }
  return null;
}

export interface SlurmClusterOptions {
  /** Node names (default: one node, `node1`). */
  nodes?: string[];
  /** Shards of each node's one GPU (`Gres=gpu:1,shard:N`); 0 or absent: gpu only. */
  shards?: number;
  /** Each node's GPU memory (or one per node name), as the node feature `gpumem_SIZE` (e.g. '4GiB'). */
  gpuMemory?: string | Record<string, string>;
  /** Also a partition of each node alone, named after it (`--partition node1` picks that node). */
  partitionPerNode?: boolean;
  /** slurm.conf's `Prolog=`: a script slurmd runs as root on a node before each job there. */
  prolog?: string;
  /** Also slurmrestd (as `nobody`, JWT authentication: `token()` makes one) at `restUrl`. */
  rest?: boolean;
}

export interface SlurmCluster {
  dir: string;
  nodes: string[];
  /** `SLURM_CONF` (and the sbin folders on PATH) for any process that talks to the cluster. */
  env: NodeJS.ProcessEnv;
  /** Runs a Slurm client (`sbatch`, `squeue`, …) against the cluster. */
  run(program: string, args: string[], input?: string): { status: number | null; stdout: string; stderr: string };
  /** Waits until Slurm has no job of the cluster left in the queue (done ones age out later). */
  waitIdle(timeoutMs?: number): Promise<void>;
  /** slurmrestd's URL, with `rest`. */
  restUrl: string | null;
  /** A JSON web token of this user for slurmrestd (`scontrol token`). */
  token(): string;
  /** The daemons' logs, for a failing test's message. */
  logs(): string;
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolvePort(port));
    });
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function stopChild(child: ChildProcess, timeoutMs = 5000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolveStop) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('exit', () => { clearTimeout(timer); resolveStop(); });
    child.kill('SIGTERM');
  });
}

/** Starts munged, slurmctld and the nodes' slurmd; resolves once every node is idle. */
export async function startSlurmCluster(options: SlurmClusterOptions = {}): Promise<SlurmCluster> {
  const nodes = options.nodes ?? ['node1'];
  const dir = mkdtempSync(join(tmpdir(), 'salus-slurm-'));
  // Jobs run as their user and must reach the job's files and munge's socket: not a private folder.
  chmodSync(dir, 0o755);
  for (const sub of ['munge', 'state', 'log', ...nodes.map((n) => join('spool', n))]) mkdirSync(join(dir, sub), { recursive: true, mode: 0o755 });
  const keyFile = join(dir, 'munge', 'munge.key');
  writeFileSync(keyFile, randomBytes(1024), { mode: 0o400 });
  const mungeSocket = join(dir, 'munge', 'munge.sock');
  if (options.rest) writeFileSync(join(dir, 'jwt.key'), randomBytes(32), { mode: 0o600 });

  const [ctldPort, restPort, ...nodePorts] = await Promise.all([freePort(), freePort(), ...nodes.map(() => freePort())]);
  const host = hostname().split('.')[0];
  const user = userInfo().username;
  const gres = options.shards ? `gpu:1,shard:${options.shards}` : 'gpu:1';
  const memoryOf = (node: string) => (typeof options.gpuMemory === 'string' ? options.gpuMemory : options.gpuMemory?.[node]);
  const features = (node: string) => (memoryOf(node) ? ` Features=gpumem_${memoryOf(node)}` : '');
  const conf = join(dir, 'slurm.conf');
  writeFileSync(conf, [
    'ClusterName=salustest',
    `SlurmctldHost=${host}(127.0.0.1)`,
    `SlurmctldPort=${ctldPort}`,
    `SlurmdPort=${nodePorts[0]}`,
    `SlurmUser=${user}`,
    `SlurmdUser=${user}`,
    'AuthType=auth/munge',
    'CredType=cred/munge',
    `AuthInfo=socket=${mungeSocket}`,
    `StateSaveLocation=${join(dir, 'state')}`,
    `SlurmdSpoolDir=${join(dir, 'spool', '%n')}`,
    `SlurmctldPidFile=${join(dir, 'slurmctld.pid')}`,
    `SlurmdPidFile=${join(dir, 'slurmd-%n.pid')}`,
    `SlurmctldLogFile=${join(dir, 'log', 'slurmctld.log')}`,
    `SlurmdLogFile=${join(dir, 'log', 'slurmd-%n.log')}`,
    'ProctrackType=proctrack/linuxproc',
    'TaskPlugin=task/none',
    'SelectType=select/cons_tres',
    'SelectTypeParameters=CR_Core',
    `GresTypes=${options.shards ? 'gpu,shard' : 'gpu'}`,
    'JobAcctGatherType=jobacct_gather/none',
    'AccountingStorageType=accounting_storage/none',
    'JobCompType=jobcomp/filetxt',
    `JobCompLoc=${join(dir, 'log', 'jobcomp.txt')}`,
    'MpiDefault=none',
    ...(options.rest ? ['AuthAltTypes=auth/jwt', `AuthAltParameters=jwt_key=${join(dir, 'jwt.key')}`] : []),
    ...(options.prolog ? [`Prolog=${options.prolog}`] : []),
    'ReturnToService=2',
    // Finished jobs stay in squeue for 5 minutes; the scheduler looks every second.
    'MinJobAge=300',
    'SchedulerParameters=sched_interval=1',
    'MessageTimeout=30',
    ...nodes.map((name, i) => `NodeName=${name} NodeHostname=${host} NodeAddr=127.0.0.1 Port=${nodePorts[i]} CPUs=2 RealMemory=1000 Gres=${gres}${features(name)} State=UNKNOWN`),
    'PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP',
    ...(options.partitionPerNode ? nodes.map((name) => `PartitionName=${name} Nodes=${name} MaxTime=INFINITE State=UP`) : []),
    '',
  ].join('\n'));
  writeFileSync(join(dir, 'gres.conf'), `Name=gpu File=/dev/null\n${options.shards ? `Name=shard Count=${options.shards}\n` : ''}`);

  const env: NodeJS.ProcessEnv = { ...process.env, SLURM_CONF: conf, PATH: searchPath() };
  const children: ChildProcess[] = [];
  const start = (program: string, args: string[], log: string) => {
    const child = spawn(program, args, { env: program === 'slurmrestd' ? { ...env, SLURM_JWT: 'daemon' } : env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const keep = (d: Buffer) => { output += d.toString(); writeFileSync(join(dir, 'log', log), output); };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    children.push(child);
    return child;
  };
  const run = (program: string, args: string[], input?: string) => {
    const result = spawnSync(program, args, { env, input, encoding: 'utf8', timeout: 30_000 });
    return { status: result.status, stdout: result.stdout ?? '', stderr: result.stderr ?? String(result.error ?? '') };
  };
  const logs = () => ['ctld.out', 'slurmctld.log', 'slurmrestd.out', ...nodes.flatMap((n) => [`slurmd-${n}.out`, `slurmd-${n}.log`])]
    .map((file) => { try { return `--- ${file}\n${readFileSync(join(dir, 'log', file), 'utf8').slice(-3000)}`; } catch { return ''; } })
    .join('\n');

  const stop = async () => {
    const queued = run('squeue', ['-h', '-o', '%i']).stdout.split('\n').filter(Boolean);
    if (queued.length) run('scancel', queued);
    // slurmd first (its job steps end with it), then the controller, then munge.
    for (const child of children.slice().reverse()) await stopChild(child);
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    start('munged', ['-F', '-f', `--key-file=${keyFile}`, `--socket=${mungeSocket}`, `--pid-file=${join(dir, 'munge', 'munged.pid')}`,
      `--seed-file=${join(dir, 'munge', 'munged.seed')}`, `--log-file=${join(dir, 'log', 'munged.log')}`], 'munged.out');
    for (let i = 0; i < 100 && run('munge', ['-S', mungeSocket, '-n']).status !== 0; i++) await sleep(50);
    start('slurmctld', ['-D', '-i'], 'ctld.out');
    for (const name of nodes) start('slurmd', ['-D', '-N', name], `slurmd-${name}.out`);
    // slurmrestd will not run as root; SLURM_JWT=daemon makes it pass each request's token on to
    // slurmctld (Slurm's jwt.html), else it turns a root token down ("Rejecting thread config token").
    if (options.rest) start('slurmrestd', ['-u', 'nobody', '-s', 'openapi/v0.0.38', '-a', 'rest_auth/jwt', `127.0.0.1:${restPort}`], 'slurmrestd.out');
    const deadline = Date.now() + 30_000;
    for (;;) {
      // One line per node and partition.
      const states = [...new Set(run('sinfo', ['-h', '-N', '-o', '%N %t']).stdout.trim().split('\n').filter(Boolean))];
      if (states.length === nodes.length && states.every((line) => /\sidle$/.test(line))) break;
      const dead = children.find((child) => child.exitCode !== null);
      if (dead || Date.now() > deadline) {
        throw new Error(`the Slurm cluster did not start (${dead ? `${dead.spawnfile} exited` : `nodes: ${states.join(', ')}`}):\n${logs()}`);
      }
      await sleep(100);
    }
  } catch (error) {
    await stop();
    throw error;
  }

  const restUrl = options.rest ? `http://127.0.0.1:${restPort}` : null;
  if (restUrl) {
    for (let i = 0; ; i++) {
      const answered = await fetch(`${restUrl}/slurm/v0.0.38/ping`).then(() => true, () => false);
      if (answered) break;
      if (i >= 100) {
        await stop();
        throw new Error(`slurmrestd did not start:\n${logs()}`);
      }
      await sleep(50);
    }
  }

  return {
    dir,
    nodes,
    env,
    restUrl,
    token() {
      const made = run('scontrol', ['token', `username=${user}`, 'lifespan=3600']);
      if (made.status !== 0) throw new Error(`scontrol token failed: ${made.stderr}`);
      return made.stdout.trim().replace(/^SLURM_JWT=/, '');
    },
    run,
    logs,
    stop,
    async waitIdle(timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const queued = run('squeue', ['-h', '-t', 'PENDING,RUNNING,COMPLETING,CONFIGURING', '-o', '%i']);
        // A busy controller may not answer: that is not an empty queue.
        if (queued.status === 0 && !queued.stdout.trim()) return;
        if (Date.now() > deadline) throw new Error(`Slurm jobs still queued after ${timeoutMs} ms:\n${run('squeue', []).stdout}`);
        await sleep(200);
      }
    },
  };
}
