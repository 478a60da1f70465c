/**
 * Panel-only state: which job is open in the drawer (and its output), how the
 * queue is sorted and filtered, the launch sheet and its draft, and the notices
 * shown when a request to the service fails.
 */
import type { StateCreator } from 'zustand';
import type { ExampleJob } from '../../../core/protocol/api.js';
import type { JobState } from '../../../core/protocol/state.js';
import type { PanelState } from './panelStore.js';

/** Columns the job queue sorts by. */
export type JobSortKey =
  | 'state' | 'name' | 'priority' | 'progress' | 'eta' | 'avgIteration' | 'persistent' | 'ephemeral' | 'gpu' | 'lane' | 'submitted';

/** The queue's sort column and direction. */
export interface JobSort {
  key: JobSortKey;
  descending: boolean;
}

/** A state, or a group of them: `active` is queued, running or paused; `finished` is done, failed or killed. */
export type JobStateFilter = 'all' | 'active' | 'finished' | JobState;

/** What the queue shows. */
export interface JobFilter {
  /** Case-insensitive substring of the job's name or id. */
  text: string;
  state: JobStateFilter;
}

/** What the launch sheet will ask for. Numbers stay text while typed; empty means "not given". */
export interface LaunchDraft {
  file: File | null;
  name: string;
  priority: string;
  iterations: string;
  /** Arguments as typed, split like a shell would (quotes group words). */
  args: string;
}

/** The launch sheet: open or not, its draft, and how the last launch went. */
export interface LaunchSheetState {
  open: boolean;
  draft: LaunchDraft;
  submitting: boolean;
  error: string | null;
}

/** A message in the corner, usually a failed request. */
export interface Notice {
  id: number;
  tone: 'error' | 'info';
  text: string;
}

/** The drawer's job output: loaded once with `jobOutput`, then extended by `output` events. */
export interface JobOutputState {
  jobId: string;
  text: string;
  loading: boolean;
  error: string | null;
}

/** Output kept per open job; older text is dropped from the front. */
export const OUTPUT_LIMIT_CHARS = 256 * 1024;

/** Panel-only state and its actions. */
export interface UiSlice {
  selectedJobId: string | null;
  sort: JobSort;
  filter: JobFilter;
  launch: LaunchSheetState;
  notices: Notice[];
  output: JobOutputState | null;
  /** The example jobs the Launch sheet offers; null until loaded. */
  examples: ExampleJob[] | null;
  /** Opens the drawer on a job (null closes it) and starts a fresh output buffer for it. */
  selectJob(jobId: string | null): void;
  /** Sorts by `key`; choosing the current key again flips the direction. */
  setSort(key: JobSortKey): void;
  setFilter(filter: Partial<JobFilter>): void;
  /** Opens the launch sheet, merging `draft` into a fresh draft. */
  openLaunch(draft?: Partial<LaunchDraft>): void;
  closeLaunch(): void;
  /** Edits the draft; picking a file names the job after it unless the user typed a name. */
  updateDraft(draft: Partial<LaunchDraft>): void;
  setLaunchStatus(status: { submitting: boolean; error: string | null }): void;
  pushNotice(tone: Notice['tone'], text: string): void;
  dismissNotice(id: number): void;
  /** Sets the open job's output (or the error loading it); ignored if another job is open now. */
  setOutput(jobId: string, result: { text: string } | { error: string }): void;
  /** Appends streamed output for the open job; other jobs' output is not kept. */
  appendOutput(jobId: string, text: string): void;
  setExamples(examples: ExampleJob[]): void;
}

/** `"train-mnist.mjs"` → `"train-mnist"`. */
export function nameFromFile(fileName: string): string {
  return fileName.replace(/^.*[\\/]/, '').replace(/\.(m?js)$/i, '');
}

/** A fresh draft: no file, priority 0, everything else unset. */
export const EMPTY_DRAFT: LaunchDraft = { file: null, name: '', priority: '0', iterations: '', args: '' };

let nextNoticeId = 1;

function trimOutput(text: string): string {
  return text.length > OUTPUT_LIMIT_CHARS ? text.slice(text.length - OUTPUT_LIMIT_CHARS) : text;
}

/** The UI slice: nothing selected, sorted by state, sheet closed. */
export const createUiSlice: StateCreator<PanelState, [], [], UiSlice> = (set, get) => ({
  selectedJobId: null,
  sort: { key: 'state', descending: false },
  filter: { text: '', state: 'all' },
  launch: { open: false, draft: EMPTY_DRAFT, submitting: false, error: null },
  notices: [],
  output: null,
  examples: null,
  selectJob(jobId) {
    if (get().selectedJobId === jobId) return;
    set({ selectedJobId: jobId, output: jobId ? { jobId, text: '', loading: true, error: null } : null });
  },
  setSort(key) {
    const { sort } = get();
    set({ sort: sort.key === key ? { key, descending: !sort.descending } : { key, descending: false } });
  },
  setFilter(filter) {
    set({ filter: { ...get().filter, ...filter } });
  },
  openLaunch(draft = {}) {
    set({ launch: { open: true, draft: EMPTY_DRAFT, submitting: false, error: null } });
    get().updateDraft(draft);
  },
  closeLaunch() {
    set({ launch: { ...get().launch, open: false, submitting: false, error: null } });
  },
  updateDraft(patch) {
    const { launch } = get();
    const draft = { ...launch.draft, ...patch };
    if (patch.file && patch.name === undefined) {
      const previousAuto = launch.draft.file ? nameFromFile(launch.draft.file.name) : '';
      if (launch.draft.name === '' || launch.draft.name === previousAuto) draft.name = nameFromFile(patch.file.name);
    }
    set({ launch: { ...launch, draft, error: null } });
  },
  setLaunchStatus({ submitting, error }) {
    set({ launch: { ...get().launch, submitting, error } });
  },
  pushNotice(tone, text) {
    // Keep the last few; a burst of failures should not bury the panel.
    set({ notices: [...get().notices.slice(-3), { id: nextNoticeId++, tone, text }] });
  },
  dismissNotice(id) {
    set({ notices: get().notices.filter((notice) => notice.id !== id) });
  },
  setOutput(jobId, result) {
    const { output } = get();
    // Replacing (not merging) is right: the bridge keeps order, so `output`
    // events that arrived before this answer are already part of its text.
    if (output?.jobId !== jobId) return;
    set({
      output: 'text' in result
        ? { jobId, text: trimOutput(result.text), loading: false, error: null }
        : { ...output, loading: false, error: result.error },
    });
  },
  appendOutput(jobId, text) {
    const { output } = get();
    if (output?.jobId !== jobId) return;
    set({ output: { ...output, text: trimOutput(output.text + text) } });
  },
  setExamples(examples) {
    set({ examples });
  },
});
