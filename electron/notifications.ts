/**
 * Desktop notifications: a job that finishes or fails while the app runs, and
 * a service that stopped unexpectedly. Clicking a job's notification brings
 * the window forward and asks the panel to select that job.
 */
import type { ServiceEvent } from '../core/protocol/api.js';
import type { JobInfo, JobState } from '../core/protocol/state.js';
import type { ServiceStatus } from './desktopApi.js';
import type { WindowController } from './window.js';

const NOTIFIED_STATES: readonly JobState[] = ['done', 'failed'];
const FINAL_STATES: readonly JobState[] = ['done', 'failed', 'killed'];
/** Notifications kept referenced (a collected one loses its click handler); oldest dropped first. */
const MAX_LIVE = 32;

/**
 * Turns the service's event stream into "these jobs just finished or failed".
 * A snapshot sets the baseline (jobs already over when the app connected are
 * not news); after it, a job counts once, when first seen in done or failed.
 */
export class JobFinishWatch {
  private states = new Map<string, JobState>();
  private baseline = false;

  /** The jobs that `event` shows reaching done or failed. */
  observe(event: ServiceEvent): JobInfo[] {
    if (event.type === 'snapshot') {
      this.states = new Map(event.snapshot.jobs.map((job) => [job.id, job.state]));
      this.baseline = true;
      return [];
    }
    if (event.type !== 'jobs') return [];
    const finished = this.baseline
      ? event.jobs.filter((job) => {
        const before = this.states.get(job.id);
        // Jobs of an earlier run of the service (its history) ended before; they are not news.
        return !job.fromEarlierRun && NOTIFIED_STATES.includes(job.state) && (before === undefined || !FINAL_STATES.includes(before));
      })
      : [];
    this.states = new Map(event.jobs.map((job) => [job.id, job.state]));
    return finished;
  }
}

/** The parts of an Electron Notification used here. */
export interface NotificationLike {
  on(event: 'click' | 'close', listener: () => void): unknown;
  show(): void;
}

export interface NotificationsSetup {
  Notification: { isSupported(): boolean; new (options: { title: string; body: string; silent?: boolean }): NotificationLike };
  client: { on(event: 'event', listener: (event: ServiceEvent) => void): unknown };
  supervisor: { on(event: 'status', listener: (status: ServiceStatus) => void): unknown };
  window: Pick<WindowController, 'show' | 'push'>;
}

/** What a finished job's notification says. */
export function jobNotification(job: JobInfo): { title: string; body: string } {
  if (job.state === 'failed') return { title: `Job failed: ${job.name}`, body: job.error ?? 'The job exited with an error.' };
  const iterations = `${job.iterations.done} iteration${job.iterations.done === 1 ? '' : 's'}`;
  const seconds = job.startedAt !== null && job.finishedAt !== null ? ` in ${formatSeconds((job.finishedAt - job.startedAt) / 1000)}` : '';
  return { title: `Job finished: ${job.name}`, body: `${iterations}${seconds}.` };
}

/** Shows a notification per finished or failed job, and one when a healthy service dies. */
export function setupNotifications({ Notification, client, supervisor, window }: NotificationsSetup): void {
  const live: NotificationLike[] = [];
  const notify = (content: { title: string; body: string }, onClick: () => void) => {
    if (!Notification.isSupported()) return;
    const notification = new Notification(content);
    live.push(notification);
    if (live.length > MAX_LIVE) live.shift();
    notification.on('click', onClick);
    notification.on('close', () => {
      const index = live.indexOf(notification);
      if (index >= 0) live.splice(index, 1);
    });
    notification.show();
  };

  const watch = new JobFinishWatch();
  client.on('event', (event) => {
    for (const job of watch.observe(event)) {
      notify(jobNotification(job), () => {
        window.show();
        window.push('selectJob', job.id);
      });
    }
  });
  // Only the first failure of a streak: a crash loop is shown in the panel, not as a pile of notifications.
  supervisor.on('status', (status) => {
    if (status.state === 'restarting' && status.consecutiveFailures === 1) {
      notify({ title: 'The Salus service stopped', body: status.message }, () => { window.show(); });
    }
  });
}

function formatSeconds(seconds: number): string {
  if (seconds < 60) return `${seconds.toFixed(seconds < 10 ? 1 : 0)} s`;
  const minutes = Math.floor(seconds / 60);
  return minutes < 60 ? `${minutes} min ${Math.round(seconds % 60)} s` : `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}
