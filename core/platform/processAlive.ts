/** Other processes, by id: whether one lives (`isProcessAlive`), and signalling verified ones. */

/** Whether a process lives, by its id (a signal-0 probe; another user's process counts as alive). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, as another user's.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Sends `signal` to each of `pids` (verified ones); a process that exited meanwhile is skipped. */
export function signalProcesses(pids: readonly number[], signal: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      // Already gone.
    }
  }
}
