/**
 * `SalusApi`: everything the panel may ask of the service, in one typed place
 * (DESIGN.md decision 7). The Electron preload implements it over
 * `ipcRenderer.invoke`; the headless panel implements it over the WebSocket at
 * `/api/events`. The renderer knows this interface and nothing else of the host.
 */
import type { ClusterJobs } from './cluster.js';
import type { JobHints, JobInfo, MemoryMap, PolicyInfo, PolicyName, PolicyParamValue, ServiceSnapshot } from './state.js';

/** A change pushed by the service. `snapshot` replaces everything; the others replace one part. */
export type ServiceEvent =
  | { type: 'snapshot'; snapshot: ServiceSnapshot }
  | { type: 'jobs'; jobs: JobInfo[] }
  | { type: 'memory'; memory: MemoryMap }
  | { type: 'policy'; policy: PolicyInfo }
  | { type: 'metrics'; at: number; busyShare: number; queueLength: number; iterationsPerSecond: Record<string, number> }
  | { type: 'output'; jobId: string; stream: 'stdout' | 'stderr'; text: string };

/** Where the panel's connection to the service stands. */
export type ConnectionState = 'connecting' | 'open' | 'closed';

/** What to launch: a job file the service can read, with the same options as `salus run`. */
export interface LaunchRequest {
  /** Path of the job's ES module on the service's machine (see `uploadJob` for browsers). */
  file: string;
  name?: string;
  args?: string[];
  hints?: JobHints;
}

/** An example job that ships with Salus (assets/jobs), offered by the Launch sheet. */
export interface ExampleJob {
  /** The file's name without `.js`, used as the job's name. */
  name: string;
  /** Its path on the service's machine, for `launchJob`. */
  file: string;
  /** One sentence from the file's header. */
  description: string;
}

export interface SalusApi {
  /** The full state now. */
  snapshot(): Promise<ServiceSnapshot>;
  /** Calls `listener` for every event until the returned function is called. */
  subscribe(listener: (event: ServiceEvent) => void): () => void;
  /** Calls `listener` when the connection changes state; returns an unsubscribe function. */
  onConnection(listener: (state: ConnectionState) => void): () => void;
  /** Switches the policy, keeping knobs not given. Applies at the next iteration boundary. */
  setPolicy(name: PolicyName, params?: Record<string, PolicyParamValue>): Promise<PolicyInfo>;
  /** Changes knobs of the current policy. */
  setPolicyParams(params: Record<string, PolicyParamValue>): Promise<PolicyInfo>;
  killJob(id: string): Promise<void>;
  pauseJob(id: string): Promise<void>;
  resumeJob(id: string): Promise<void>;
  setPriority(id: string, priority: number): Promise<void>;
  /** Starts a job process on the service's machine; resolves with its job id. */
  launchJob(request: LaunchRequest): Promise<{ jobId: string }>;
  /** Stores a job file's text in the service's jobs folder; resolves with the path to launch. */
  uploadJob(fileName: string, source: string): Promise<{ file: string }>;
  /** The job's captured output so far (stdout and stderr, interleaved). */
  jobOutput(id: string): Promise<string>;
  /** The example jobs on the service's machine, ready for `launchJob`. */
  exampleJobs(): Promise<ExampleJob[]>;
  /**
   * The cluster's Salus jobs from Slurm, as `salus jobs --cluster --json` lists
   * them, asked where the service runs; `{available: false, reason}` where that
   * machine has no Slurm.
   */
  clusterJobs(): Promise<ClusterJobs>;
  /** Ends a Slurm job (its Slurm id) with `scancel`, or slurmrestd where one is configured. */
  killClusterJob(slurmJobId: string): Promise<void>;
  /**
   * Desktop host only: the checked path of a file dropped on the window (a DOM
   * `File`), so the job runs in place, next to the files it imports. Hosts without
   * it (a browser) upload the file's text with `uploadJob` instead.
   */
  pathForDroppedFile?(file: unknown): Promise<string>;
}
