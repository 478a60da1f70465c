/**
 * The app's lifetime: one instance (a second launch focuses the first), the
 * window re-created on macOS's dock click, and the service stopped before the
 * app quits so no orphan keeps the GPU.
 */

export interface LifecycleApp {
  requestSingleInstanceLock(): boolean;
  quit(): void;
  on(event: 'second-instance' | 'window-all-closed' | 'activate', listener: () => void): unknown;
  on(event: 'before-quit', listener: (event: { preventDefault(): void }) => void): unknown;
}

/**
 * Takes the single-instance lock. Returns false (and quits) when another
 * instance holds it; that instance then runs `onSecondInstance`.
 */
export function setupSingleInstance({ app, onSecondInstance }: { app: LifecycleApp; onSecondInstance: () => void }): boolean {
  if (!app.requestSingleInstanceLock()) {
    app.quit();
    return false;
  }
  app.on('second-instance', onSecondInstance);
  return true;
}

/** Quits when the last window closes (except on macOS), reopens on activate, stops the service before quitting. */
export function setupLifecycle({ app, platform, showWindow, stopService }: {
  app: LifecycleApp;
  platform: NodeJS.Platform;
  showWindow: () => void;
  stopService: () => Promise<void>;
}): void {
  let serviceStopped = false;
  let stopping: Promise<void> | null = null;
  app.on('window-all-closed', () => {
    if (platform !== 'darwin') app.quit();
  });
  app.on('activate', showWindow);
  app.on('before-quit', (event) => {
    if (serviceStopped) return;
    // Hold the quit until the service has shut down cleanly, then quit again.
    event.preventDefault();
    stopping ??= stopService().catch(() => undefined).finally(() => {
      serviceStopped = true;
      app.quit();
    });
  });
}
