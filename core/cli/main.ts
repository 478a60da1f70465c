/**
 * The `salus` command. `serve` runs the service; `run` starts a job on it; the
 * rest ask a running service over its socket. Every failure prints one line
 * saying what to do and exits non-zero.
 */
import { parseArgs } from 'node:util';
import { findServiceSocket, isListening, resolveSocketPath } from '../platform/socketPath.js';
import { ServiceConnection } from '../client/connection.js';
import { runJob } from '../client/run.js';
import { parseSize } from '../platform/size.js';
import { parseKnobValue } from '../scheduler/params.js';
import { formatClusterJobs, formatClusterMemory, formatJobs, formatMemory, formatPolicy } from './format.js';
import { serve } from './serve.js';
import { formatSimulation, historyTraceCsv, parseSimulateArgs, runSimulation } from './simulate.js';
import { serveSettings } from './serveSettings.js';
import { printJobLogs } from './logs.js';
import { installUserUnit, unitServeArgs } from './installUnit.js';
import { formatHistory, historyFilter } from './history.js';
import { schedulingHintFlags } from '../platform/hintFlags.js';
import { readHistoryOffline } from '../history/offline.js';
import { resolveDataDir } from '../history/dataDir.js';
import type { HistoryEntry } from '../protocol/history.js';
import type { JobHints, JobInfo, MemoryMap, PolicyInfo } from '../protocol/state.js';
import { parseSubmitArgs, submitJob } from '../cluster/submit.js';
import { cancelSlurmJob, listClusterJobs, slurmJobIdOf } from '../cluster/clusterJobs.js';
import { clusterMemory } from '../cluster/nodeMemory.js';

const USAGE = `usage: salus <command> [options]

  serve [--socket PATH] [--http [HOST:]PORT] [--memory SIZE|ID=SIZE,...] [--policy NAME]
        [--gpus all|hardware|software|N,...|NAME,...] [--backend NAME] [--adapter NAME]
        [--jobs-dir DIR] [--data-dir DIR]
        [--log-level error|warn|info|debug] [--log-file FILE] [--install]
                          run the service (owns the GPUs: every hardware one, else
                          a software one, unless --gpus says); defaults from the
                          settings file ($XDG_CONFIG_HOME/salus/config.json);
                          --install writes a systemd user unit that runs it instead
  run FILE [--name N] [--priority P] [--iterations N] [--duration DURATION] [--share W]
        [--persistent SIZE] [--ephemeral SIZE] [--gpu ID] [--socket PATH] [--local] [--no-adapters] [-- ARGS]
                          run FILE (an ES module) as a job on the service (--gpu:
                          on that GPU only, e.g. gpu1);
                          --no-adapters: leave TF.js's and ONNX Runtime Web's
                          buffer pools as they are (see README, memory)
  submit FILE [--slurm] [--partition P] [--time T] [--output PATH] [--name N]
        [--priority P] [--iterations N] [--duration DURATION] [--share W] [--persistent SIZE]
        [--ephemeral SIZE] [--socket PATH] [--gres SPEC] [--gpu-memory SIZE] [--print] [-- ARGS]
                          hand FILE to Slurm (sbatch), which picks a node; it runs
                          there under salus run on the node's service (--socket: its
                          path there, %n the node's name); prints Slurm's job id.
                          Without --slurm and Slurm, the local service runs it
  jobs [--json]           the job table (with the newest jobs of earlier runs)
  jobs --cluster [--json] the cluster's Salus jobs, from Slurm (see docs/slurm.md)
  history [--json] [--state S[,S]] [--name GLOB] [--since DURATION] [--limit N] [--data-dir DIR]
                          recorded jobs of every run, newest first (DURATION: 90s, 30m, 2h, 7d);
                          with no service running, read from the data folder
  history --trace [the same filters]
                          those jobs as a trace for salus simulate
  logs ID [--follow]      a job's output (stdout and stderr), live with --follow
  memory [--json]         the memory map
  memory --cluster --socket PATTERN [--json]
                          each GPU node's memory map, from its service at PATTERN
                          (%n: the node's name) where this machine reaches it
  policy [NAME] [--set KEY=VALUE]... [--json]
                          show or change the scheduling policy and its knobs
  simulate TRACE [--policy NAME]... [--memory SIZE] [--gpus N] [--set KEY=VALUE]...
        [--max-speedup X] [--json]
                          replay a trace of jobs (CSV or JSON) in virtual time under
                          each policy (all five by default); see docs/simulator.md
  kill ID | pause ID | resume ID
                          (kill slurm:ID, or a number: scancel that Slurm job)
  priority ID VALUE       change a job's priority
  share ID W              change a job's share of GPU time under FAIR (a number above 0)

SIZE is bytes or a number with KiB, MiB, GiB. The socket defaults to $SALUS_SOCKET,
else $XDG_RUNTIME_DIR/salus/salus.sock; clients use the desktop app's service
($XDG_RUNTIME_DIR/salus/desktop.sock) when only that one is running.`;

/** A command line we cannot run; `showUsage` false for a bad value, where the whole usage would bury the message. */
class UsageError extends Error {
  constructor(message: string, readonly showUsage = true) {
    super(message);
  }
}

/** `parse()`'s result; what it throws becomes a UsageError (its message, then the usage). */
function parsed<T>(parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/**
 * Exits with `code` once stdout and stderr have handed all that was written to
 * the OS: a pipe read slowly (`salus simulate --json | jq`) would otherwise lose
 * what did not fit in it to process.exit.
 */
function exitWhenFlushed(code: number): void {
  process.exitCode = code;
  let pending = 2;
  const flushed = () => { if (--pending === 0) process.exit(code); };
  process.stdout.write('', flushed);
  process.stderr.write('', flushed);
}

function fail(message: string, code = 1): void {
  process.stderr.write(`${message}\n`);
  exitWhenFlushed(code);
}

function number(value: string | undefined, what: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n)) throw new UsageError(`${what} must be a number, got '${value}'`, false);
  return n;
}

/** `salus run`'s --duration, --share and --gpu as job hints; a bad value is a UsageError. */
function runSchedulingHints(values: { duration?: string; share?: string; gpu?: string }): Pick<JobHints, 'durationMs' | 'share' | 'gpu'> {
  try {
    return schedulingHintFlags(values);
  } catch (error) {
    throw new UsageError((error as Error).message, false);
  }
}

async function control<T>(socket: string | undefined, method: string, ...params: unknown[]): Promise<T> {
  const connection = await ServiceConnection.open(await findServiceSocket(socket), { role: 'control' });
  try {
    return await connection.call<T>(method, ...params);
  } finally {
    connection.close();
  }
}

function print(json: boolean, value: unknown, text: (v: any) => string): void {
  process.stdout.write(`${json ? JSON.stringify(value, null, 2) : text(value)}\n`);
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'serve': {
      const { values } = parseArgs({
        args: rest, options: {
          socket: { type: 'string' }, http: { type: 'string' }, memory: { type: 'string' }, policy: { type: 'string' },
          gpus: { type: 'string' }, backend: { type: 'string' }, adapter: { type: 'string' }, 'jobs-dir': { type: 'string' }, 'data-dir': { type: 'string' },
          'log-level': { type: 'string' }, 'log-file': { type: 'string' }, install: { type: 'boolean' },
        },
      });
      if (values.install) {
        process.stdout.write(installUserUnit(unitServeArgs(rest)));
        return 0;
      }
      await serve({
        ...serveSettings(values),
        socketPath: resolveSocketPath(values.socket),
        backend: values.backend,
        adapter: values.adapter,
        gpus: values.gpus,
        dataDir: values['data-dir'],
      });
      return new Promise(() => {}); // Runs until a signal stops it.
    }
    case 'run': {
      const dashDash = rest.indexOf('--');
      const own = dashDash >= 0 ? rest.slice(0, dashDash) : rest;
      const jobArgs = dashDash >= 0 ? rest.slice(dashDash + 1) : [];
      const { values, positionals } = parseArgs({
        args: own, allowPositionals: true, options: {
          name: { type: 'string' }, priority: { type: 'string' }, iterations: { type: 'string' },
          duration: { type: 'string' }, share: { type: 'string' }, gpu: { type: 'string' },
          persistent: { type: 'string' }, ephemeral: { type: 'string' }, socket: { type: 'string' }, local: { type: 'boolean' },
          'no-adapters': { type: 'boolean' },
        },
      });
      const [file, ...extra] = positionals;
      if (!file) throw new UsageError('salus run needs a FILE');
      const iterations = number(values.iterations, '--iterations');
      return runJob({
        file, args: [...extra, ...jobArgs], socketPath: values.local ? resolveSocketPath(values.socket) : await findServiceSocket(values.socket), name: values.name, local: values.local,
        adapters: !values['no-adapters'],
        hints: {
          priority: number(values.priority, '--priority'),
          iterations: iterations === undefined ? undefined : Math.round(iterations),
          ...runSchedulingHints(values),
          persistentBytes: values.persistent === undefined ? undefined : parseSize(values.persistent),
          ephemeralBytes: values.ephemeral === undefined ? undefined : parseSize(values.ephemeral),
        },
      });
    }
    case 'submit': {
      const request = parsed(() => parseSubmitArgs(rest));
      const submitted = await submitJob(request, async (hints) => (await control<{ jobId: string }>(
        request.socket, 'launchJob', { file: request.file, name: request.name, args: request.args, hints })).jobId);
      if (submitted.script !== undefined) process.stdout.write(submitted.script);
      else process.stdout.write(`${submitted.jobId}\n`);
      if (submitted.gres) process.stderr.write(`salus: ${request.print ? 'would ask' : `Slurm job ${submitted.jobId} asks`} for --gres=${submitted.gres} (${submitted.reason})\n`);
      return 0;
    }
    case 'jobs':
    case 'memory': {
      const { values } = parseArgs({ args: rest, options: { json: { type: 'boolean' }, socket: { type: 'string' }, cluster: { type: 'boolean' } } });
      if (values.cluster && command === 'jobs') print(Boolean(values.json), await listClusterJobs(), formatClusterJobs);
      else if (values.cluster) print(Boolean(values.json), await clusterMemory(values.socket ?? ''), formatClusterMemory);
      else if (command === 'jobs') print(Boolean(values.json), await control<JobInfo[]>(values.socket, 'jobs'), formatJobs);
      else print(Boolean(values.json), await control<MemoryMap>(values.socket, 'memory'), formatMemory);
      return 0;
    }
    case 'history': {
      const { values } = parseArgs({
        args: rest, options: {
          json: { type: 'boolean' }, socket: { type: 'string' }, state: { type: 'string', multiple: true },
          name: { type: 'string' }, since: { type: 'string' }, limit: { type: 'string' }, 'data-dir': { type: 'string' },
          trace: { type: 'boolean' },
        },
      });
      if (values.trace && values.json) throw new UsageError('salus history: --trace and --json each choose the output; give one');
      const show = (entries: HistoryEntry[]) => (values.trace ? process.stdout.write(historyTraceCsv(entries)) : print(Boolean(values.json), entries, formatHistory));
      let filter;
      try {
        filter = historyFilter(values);
      } catch (error) {
        throw new UsageError((error as Error).message);
      }
      const socket = await findServiceSocket(values.socket);
      if (await isListening(socket)) {
        show(await control<HistoryEntry[]>(values.socket, 'history', filter));
        return 0;
      }
      // No service: read its data folder (every service's jobs there), as a crashed one left it.
      const dataDir = resolveDataDir(values['data-dir']);
      process.stderr.write(`salus: no service is running; the history in ${dataDir}:\n`);
      show(readHistoryOffline(dataDir, filter));
      return 0;
    }
    case 'logs': {
      const { values, positionals } = parseArgs({
        args: rest, allowPositionals: true, options: { follow: { type: 'boolean', short: 'f' }, socket: { type: 'string' } },
      });
      if (positionals.length !== 1) throw new UsageError('salus logs needs one job ID (see `salus jobs`)');
      return printJobLogs(await findServiceSocket(values.socket), positionals[0], Boolean(values.follow));
    }
    case 'policy': {
      const { values, positionals } = parseArgs({
        args: rest, allowPositionals: true,
        options: { json: { type: 'boolean' }, socket: { type: 'string' }, set: { type: 'string', multiple: true } },
      });
      const current = await control<PolicyInfo>(values.socket, 'policy');
      const name = positionals[0];
      const chosen = name ? await control<PolicyInfo>(values.socket, 'setPolicy', name) : current;
      const knobs = chosen.knobs;
      const params: Record<string, number | boolean> = {};
      for (const assignment of values.set ?? []) {
        const split = assignment.indexOf('=');
        if (split <= 0) throw new UsageError(`--set ${assignment}: expected KEY=VALUE with KEY one of ${knobs.map((k) => k.key).join(', ')}`);
        const key = assignment.slice(0, split);
        try {
          params[key] = parseKnobValue(chosen, key, assignment.slice(split + 1));
        } catch (error) {
          throw new UsageError(`--set ${assignment}: ${(error as Error).message}`, false);
        }
      }
      const policy = Object.keys(params).length
        ? await control<PolicyInfo>(values.socket, 'setPolicyParams', params)
        : await control<PolicyInfo>(values.socket, 'policy');
      print(Boolean(values.json), { name: policy.name, params: policy.params, knobs: policy.knobs }, formatPolicy);
      return 0;
    }
    case 'simulate': {
      const request = parsed(() => parseSimulateArgs(rest));
      process.stdout.write(`${formatSimulation(runSimulation(request), request)}\n`);
      return 0;
    }
    case 'kill':
    case 'pause':
    case 'resume': {
      const { values, positionals } = parseArgs({ args: rest, allowPositionals: true, options: { socket: { type: 'string' } } });
      if (positionals.length !== 1) throw new UsageError(`salus ${command} needs one job ID (see \`salus jobs\`)`);
      const slurmJobId = command === 'kill' ? slurmJobIdOf(positionals[0]) : null;
      if (slurmJobId !== null) {
        await cancelSlurmJob(slurmJobId);
        process.stdout.write(`Slurm job ${slurmJobId} cancelled\n`);
        return 0;
      }
      await control(values.socket, `${command}Job`, positionals[0]);
      process.stdout.write(`${positionals[0]} ${command === 'kill' ? 'killed' : command === 'pause' ? 'paused' : 'resumed'}\n`);
      return 0;
    }
    case 'priority': {
      const { values, positionals } = parseArgs({ args: rest, allowPositionals: true, options: { socket: { type: 'string' } } });
      const priority = number(positionals[1], 'VALUE');
      if (positionals.length !== 2 || priority === undefined) throw new UsageError('salus priority needs a job ID and a VALUE');
      await control(values.socket, 'setPriority', positionals[0], priority);
      return 0;
    }
    case 'share': {
      const { values, positionals } = parseArgs({ args: rest, allowPositionals: true, options: { socket: { type: 'string' } } });
      const share = number(positionals[1], 'W');
      if (positionals.length !== 2 || share === undefined) throw new UsageError('salus share needs a job ID and a share W');
      if (!(share > 0)) throw new UsageError(`W must be a number above 0, got '${positionals[1]}'`, false);
      await control(values.socket, 'setShare', positionals[0], share);
      process.stdout.write(`${positionals[0]} share ${share}\n`);
      return 0;
    }
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(`${USAGE}\n`);
      return command === undefined ? 2 : 0;
    default:
      throw new UsageError(`unknown command '${command}'`);
  }
}

main(process.argv.slice(2)).then(
  (code) => exitWhenFlushed(code),
  (error: Error) => {
    if (error instanceof UsageError || (error as NodeJS.ErrnoException).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
      const message = error.message.startsWith('salus') ? error.message : `salus: ${error.message}`;
      const showUsage = !(error instanceof UsageError) || error.showUsage;
      fail(showUsage ? `${message}\n\n${USAGE}` : `${message}\n(salus --help lists the commands and their options)`, 2);
      return;
    }
    // Some failures have an exit code of their own (no GPU: 4), for a supervisor to tell them apart.
    fail(error.message.startsWith('salus:') ? error.message : `salus: ${error.message}`, (error as { exitCode?: number }).exitCode ?? 1);
  },
);
