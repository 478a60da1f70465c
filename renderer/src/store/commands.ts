/**
 * What the panel asks of the service. Each command calls `SalusApi`, applies
 * the answer to the store, and turns a failure into a notice instead of an
 * unhandled rejection. The service's own events confirm the rest.
 */
import type { ExampleJob, SalusApi } from '../../../core/protocol/api.js';
import type { PolicyInfo, PolicyName, PolicyParamValue } from '../../../core/protocol/state.js';
import type { ClusterJobs } from '../../../core/protocol/cluster.js';
import { buildLaunchRequest } from './launchRequest.js';
import type { PanelStore } from './panelStore.js';

/** The service requests the views make; none of them throws. */
export interface Commands {
  killJob(jobId: string): Promise<void>;
  pauseJob(jobId: string): Promise<void>;
  resumeJob(jobId: string): Promise<void>;
  setPriority(jobId: string, priority: number): Promise<void>;
  setShare(jobId: string, share: number): Promise<void>;
  setPolicy(name: PolicyName): Promise<void>;
  /**
   * Changes knobs: shown at once, sent one request at a time. Changes made while
   * a request is out are merged and sent next, so a dragged slider never
   * queues a backlog or lands on a stale value.
   */
  setPolicyParams(params: Record<string, PolicyParamValue>): Promise<void>;
  /** Uploads the draft's file, launches it, closes the sheet and opens the new job. Resolves true on success. */
  launch(): Promise<boolean>;
  /** Launches a shipped example as it is (named after it), closes the sheet and opens the new job. */
  launchExample(example: ExampleJob): Promise<boolean>;
  /** Loads the examples the Launch sheet offers (once; a failure leaves an empty list). */
  loadExamples(): Promise<void>;
  /** Loads the open job's output into the drawer. */
  loadOutput(jobId: string): Promise<void>;
  /** The cluster's Salus jobs for the Cluster view; a failure comes back as `{ available: null, error }`. */
  clusterJobs(): Promise<ClusterJobs | { available: null; error: string }>;
  /** Cancels a Slurm job (scancel where the service runs); a failure becomes a notice. */
  killClusterJob(slurmJobId: string, name: string): Promise<void>;
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Commands for `api`, reporting into `store`. */
export function createCommands(api: SalusApi, store: PanelStore): Commands {
  const state = () => store.getState();
  const jobLabel = (jobId: string) => state().jobsById[jobId]?.name ?? jobId;

  async function attempt(what: string, run: () => Promise<unknown>): Promise<void> {
    try {
      await run();
    } catch (error) {
      state().pushNotice('error', `${what}: ${message(error)}`);
    }
  }

  let paramsInFlight = false;
  let queuedParams: Record<string, PolicyParamValue> | null = null;
  let confirmedPolicy: PolicyInfo | null = null;

  return {
    killJob: (jobId) => attempt(`Could not kill ${jobLabel(jobId)}`, () => api.killJob(jobId)),
    pauseJob: (jobId) => attempt(`Could not pause ${jobLabel(jobId)}`, () => api.pauseJob(jobId)),
    resumeJob: (jobId) => attempt(`Could not resume ${jobLabel(jobId)}`, () => api.resumeJob(jobId)),
    setPriority: (jobId, priority) =>
      attempt(`Could not set the priority of ${jobLabel(jobId)}`, () => api.setPriority(jobId, priority)),
    setShare: (jobId, share) =>
      attempt(`Could not set the GPU share of ${jobLabel(jobId)}`, () => api.setShare(jobId, share)),
    setPolicy: (name) =>
      attempt(`Could not switch to ${name}`, async () => state().applyPolicy(await api.setPolicy(name))),

    async setPolicyParams(params) {
      if (!paramsInFlight && !queuedParams) confirmedPolicy = state().policy;
      state().setParamsLocally(params);
      if (paramsInFlight) {
        queuedParams = { ...queuedParams, ...params };
        return;
      }
      paramsInFlight = true;
      let next: Record<string, PolicyParamValue> | null = params;
      try {
        while (next) {
          const sending: Record<string, PolicyParamValue> = next;
          try {
            confirmedPolicy = await api.setPolicyParams(sending);
          } catch (error) {
            state().pushNotice('error', `Could not change ${Object.keys(sending).join(', ')}: ${message(error)}`);
          }
          next = queuedParams;
          queuedParams = null;
        }
      } finally {
        paramsInFlight = false;
        // Until now the hand's values were shown over every answer and event; now the service's last word is.
        state().settleParams();
        if (confirmedPolicy) state().applyPolicy(confirmedPolicy);
      }
    },

    async launch() {
      const { draft } = state().launch;
      if (!draft.file) {
        state().setLaunchStatus({ submitting: false, error: 'Choose a job file (.js or .mjs) first.' });
        return false;
      }
      state().setLaunchStatus({ submitting: true, error: null });
      try {
        const checked = buildLaunchRequest(draft, '');
        if ('error' in checked) throw new Error(checked.error);
        const file = await jobFileFor(api, draft.file);
        const { jobId } = await api.launchJob({ ...checked.request, file });
        state().closeLaunch();
        state().selectJob(jobId);
        return true;
      } catch (error) {
        state().setLaunchStatus({ submitting: false, error: message(error) });
        return false;
      }
    },

    async launchExample(example) {
      state().setLaunchStatus({ submitting: true, error: null });
      try {
        const { jobId } = await api.launchJob({ file: example.file, name: example.name });
        state().closeLaunch();
        state().selectJob(jobId);
        return true;
      } catch (error) {
        state().setLaunchStatus({ submitting: false, error: `${example.name}: ${message(error)}` });
        return false;
      }
    },

    async loadExamples() {
      if (state().examples) return;
      // An older service without the call: the sheet simply offers no examples.
      state().setExamples(await api.exampleJobs().catch(() => []));
    },

    async loadOutput(jobId) {
      try {
        state().setOutput(jobId, { text: await api.jobOutput(jobId) });
      } catch (error) {
        state().setOutput(jobId, { error: message(error) });
      }
    },

    clusterJobs: () => api.clusterJobs().catch((error: unknown) => ({ available: null, error: message(error) })),
    killClusterJob: (slurmJobId, name) =>
      attempt(`Could not cancel Slurm job ${slurmJobId} (${name})`, () => api.killClusterJob(slurmJobId)),
  };
}

/**
 * Where the service can read the job: the file itself when the host can name its
 * path (the desktop app, so the job runs beside what it imports), else an upload.
 */
async function jobFileFor(api: SalusApi, picked: File): Promise<string> {
  if (api.pathForDroppedFile) {
    const path = await api.pathForDroppedFile(picked).catch(() => null);
    if (path) return path;
  }
  return (await api.uploadJob(picked.name, await picked.text())).file;
}
