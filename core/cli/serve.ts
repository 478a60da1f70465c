/**
 * `salus serve`: opens the GPUs and sizes their memory (serveGpus.ts), starts the service on its
 * socket (and, with `--http`, the panel's web server), and shuts down cleanly on
 * SIGINT or SIGTERM.
 */
import { join } from 'node:path';
import { unlinkSync } from 'node:fs';
import { DAWN_POLLING, SOFTWARE_GPU_POLLING, throttleDawnPolling } from '../executor/dawnPolling.js';
import { countQueueWork } from '../executor/queueActivity.js';
import { openServiceGpus } from './serveGpus.js';
import type { GpuMemoryFlag } from '../platform/gpuId.js';
import { SalusService, SERVICE_VERSION } from '../service/service.js';
import { startScratchRings } from '../service/scratchRings.js';
import type { ControlTarget } from '../service/control.js';
import { openJobHistory, resolveDataDir } from '../history/index.js';
import { listenSocket } from '../server/socketServer.js';
import { JobLauncher } from '../service/launcher.js';
import { cancelSlurmJob, clusterJobsAnswer } from '../cluster/clusterJobs.js';
import { prepareBulkDir, removeBulkDir } from '../platform/bulkDir.js';
import { createLogger, type Logger } from '../platform/logger.js';
import { POLICY_NAMES, type PolicyName, type PolicyParamValue } from '../protocol/state.js';

export interface ServeOptions {
  socketPath: string;
  http?: string;
  /** `--memory`: every GPU's size, or each one's. */
  memory?: GpuMemoryFlag;
  /** `--gpus`: which adapters (serveGpus.ts, `chooseAdapters`). */
  gpus?: string;
  policy?: string;
  /** Knobs of the policy (from the settings file); ones it does not have are a warning, not a failure. */
  params?: Record<string, PolicyParamValue>;
  /** Where the service logs (default: info and up, to stderr). */
  logger?: Logger;
  backend?: string;
  adapter?: string;
  jobsDir?: string;
  /** The job history's folder (core/history/dataDir.ts); uploaded job files go in its `jobs` folder unless `jobsDir` says. */
  dataDir?: string;
}

/** The exit code of a service whose GPU device was lost. */
export const EXIT_GPU_LOST = 3;

/** Starts everything; resolves once the service listens. */
export async function serve(options: ServeOptions): Promise<SalusService> {
  const policy = (options.policy ?? 'FIFO').toUpperCase();
  if (!POLICY_NAMES.includes(policy as PolicyName)) {
    throw new Error(`salus: unknown policy '${options.policy}'; choose one of ${POLICY_NAMES.join(', ')}`);
  }
  // The panel's address is checked before anything starts, so a typo costs no GPU start-up.
  const httpServer = options.http === undefined ? null : await import('../bridge/httpServer.js');
  httpServer?.parseListen(options.http!);
  const logger = options.logger ?? createLogger();
  const gpus = await openServiceGpus({ backend: options.backend, adapter: options.adapter, gpus: options.gpus, memory: options.memory, log: logger.info });
  // The service waits on the GPU for every job at once: dawn.node's polls while it waits are throttled, and
  // spaced further apart as a wait goes on where the GPU is software and its threads share our cores (dawnPolling.ts).
  throttleDawnPolling(gpus.every(({ gpu }) => gpu.info.isSoftware) ? SOFTWARE_GPU_POLLING : DAWN_POLLING);
  // An idle queue's onSubmittedWorkDone is answered without asking Dawn (see queueActivity.ts): count queue work from here on.
  countQueueWork();
  const dataDir = resolveDataDir(options.dataDir);
  const service = new SalusService({ gpus, policy: policy as PolicyName, bulkDir: prepareBulkDir(), log: logger.info });
  const scratchRings = startScratchRings(service);
  if (options.params && Object.keys(options.params).length > 0) {
    try {
      service.setPolicyParams(options.params);
    } catch (error) {
      logger.warn(`salus: ignored the saved knobs of ${policy}: ${(error as Error).message}`);
    }
  }
  if (gpus.every(({ gpu }) => gpu.info.isSoftware)) {
    logger.warn('salus: no hardware GPU found: running on a software GPU (SwiftShader). Jobs work, but slowly.');
  }
  const jobsDir = options.jobsDir ?? join(dataDir, 'jobs');
  const launcher = new JobLauncher(service, options.socketPath, jobsDir);
  const target: ControlTarget = { service, launcher, cluster: { jobs: clusterJobsAnswer, cancel: cancelSlurmJob } };
  const server = await listenSocket(target, options.socketPath);
  // Only now, with the socket ours, are this socket's earlier runs surely over (their unfinished jobs lost).
  // Synchronously after listening: no job has said hello yet.
  const history = openJobHistory({ dataDir, serviceKey: options.socketPath, version: SERVICE_VERSION, log: service.log });
  if (history) {
    service.useHistory(history);
    history.attach(service);
    launcher.observer = history.launches;
  }
  service.log(`salus: GPU ${service.describe()}`);
  process.stdout.write(`salus: listening on ${options.socketPath}\n`);
  if (history) service.log(`salus: job history in ${dataDir}`);
  if (httpServer) {
    // Before earlier launches start again: a panel that cannot listen ends the service with nothing started.
    const http = await httpServer.startHttp(target, options.http!);
    process.stdout.write(`salus: panel at ${http.url}\n`);
  }
  history?.relaunchWaiting((request, caller) => launcher.relaunch(request, caller));
  let stopping = false;
  const stop = (signal: string) => {
    stopping = true;
    service.log(`salus: ${signal}: shutting down`);
    server.close();
    history?.close();
    service.dispose();
    scratchRings?.close();
    removeBulkDir(service.options.bulkDir ?? null);
    try {
      if (process.platform !== 'win32') unlinkSync(options.socketPath);
    } catch {
      // Already gone.
    }
    process.exit(process.exitCode ?? 0);
  };
  // One job's failure must not end the service for everyone: log what escaped and keep serving.
  process.on('unhandledRejection', (reason) => {
    logger.error(`salus: internal error (kept serving): ${(reason as Error)?.stack ?? String(reason)}`);
  });
  // A lost device does not come back: tell every job, then exit for a supervisor (the desktop app,
  // systemd) to start a service on a fresh one.
  // One lost device ends the service: a supervisor restarts it on every GPU, so no job is left on a GPU it cannot see.
  for (const { gpu, id } of gpus) {
    void gpu.device.lost.then((info) => {
      if (stopping) return;
      stopping = true;
      server.close();
      service.loseGpu(`${gpus.length > 1 ? `${id}: ` : ''}${info.message || `reason ${info.reason}`}`);
      setTimeout(() => stop('GPU device lost'), 200).unref();
      process.exitCode = EXIT_GPU_LOST;
    });
  }
  if (process.env.SALUS_TEST_HOOKS === '1') {
    // Tests only: SIGUSR2 loses the first GPU's device, as a driver reset would.
    process.on('SIGUSR2', () => gpus[0].gpu.device.destroy());
  }
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
  return service;
}
