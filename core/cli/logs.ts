/**
 * `salus logs ID [--follow]`: a job's captured output (stdout and stderr, as
 * the panel's detail view shows it; the last 256 KiB), while it runs or after
 * it ended, as long as the service remembers the job. `--follow` keeps
 * printing what the job writes until it ends.
 */
import { ServiceConnection } from '../client/connection.js';
import type { ServerMessage } from '../protocol/messages.js';
import type { JobInfo } from '../protocol/state.js';

const ENDED = new Set(['done', 'failed', 'killed']);
/** After a job ends, how long to wait for the output it wrote last (pipes drain, and `salus run` relays, after the job has closed its connection). */
const TRAILING_OUTPUT_MS = 1000;

/** Prints job `id`'s output to `write`; with `follow`, until the job ends. Resolves with the exit code. */
export async function printJobLogs(socketPath: string, id: string, follow: boolean, write: (text: string) => void = (text) => process.stdout.write(text)): Promise<number> {
  const connection = await ServiceConnection.open(socketPath, { role: 'control' });
  if (!follow) {
    try {
      write(await connection.call<string>('jobOutput', id));
      return 0;
    } finally {
      connection.close();
    }
  }
  // Subscribe first, then read what is there: events that arrive before that answer are already in it.
  let caughtUp = false;
  let finish: (code: number) => void = () => {};
  const finished = new Promise<number>((resolve) => { finish = resolve; });
  const endSoon = () => setTimeout(() => finish(0), TRAILING_OUTPUT_MS);
  connection.on('message', (message: ServerMessage) => {
    if (message.t !== 'event' || !caughtUp) return;
    const { event } = message;
    if (event.type === 'output' && event.jobId === id) write(event.text);
    if (event.type === 'jobs' && isEnded(event.jobs, id)) endSoon();
  });
  connection.on('close', () => finish(caughtUp ? 0 : 1));
  // The connection does not hold the process open while idle; following does.
  const keepAlive = setInterval(() => {}, 60_000);
  try {
    await connection.call('subscribe');
    write(await connection.call<string>('jobOutput', id));
    caughtUp = true;
    if (isEnded(await connection.call<JobInfo[]>('jobs'), id)) endSoon();
    return await finished;
  } finally {
    clearInterval(keepAlive);
    connection.close();
  }
}

function isEnded(jobs: JobInfo[], id: string): boolean {
  const job = jobs.find((j) => j.id === id);
  return !job || ENDED.has(job.state);
}
