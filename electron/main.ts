/**
 * Electron's main process: wires one feature per `setupX()` call, passing each
 * the parts of Electron it needs (so every one is tested with fakes; the
 * binary cannot run on the build machines). The service itself runs in a
 * plain Node child process (serviceSupervisor.ts, DESIGN.md decision 6).
 */
import { app, BrowserWindow, ipcMain, Notification, protocol, screen, session } from 'electron';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { registerAppScheme, setupAppProtocol } from './appProtocol.js';
import { createInvokeHandlers, setupIpc } from './ipc.js';
import { setupLifecycle, setupSingleInstance } from './lifecycle.js';
import { setupNotifications } from './notifications.js';
import { setupSecurity } from './security.js';
import { applySavedKnobs, ServiceClient, setupServiceClient } from './serviceClient.js';
import { desktopSocketPath, resolveNodeBinary, serviceArguments, serviceCliPath, ServiceSupervisor } from './serviceSupervisor.js';
import { SettingsStore, settingsFilePath } from '../core/platform/settingsFile.js';
import { setupWindow, type WindowController } from './window.js';

const here = import.meta.dirname;
/** The panel's window, once the app is ready (a second instance's launch shows it). */
let panel: WindowController | null = null;

// Both must happen before 'ready': the scheme's privileges, and the lock.
registerAppScheme(protocol);
if (setupSingleInstance({ app, onSecondInstance: () => panel?.show() })) {
  app.enableSandbox();
  app.whenReady().then(start, (error: Error) => {
    console.error(`salus desktop: ${error.message}`);
    app.exit(1);
  });
}

function start(): void {
  // One file for the app and `salus serve` (a terminal's service reads the same defaults); the
  // app's own settings.json of before is copied into it once.
  const settings = SettingsStore.load(settingsFilePath(), join(app.getPath('userData'), 'settings.json'));
  for (const problem of settings.problems) console.error(`salus desktop: ${problem}`);

  setupSecurity({ app, session: session.defaultSession });
  setupAppProtocol({ protocol, rootDir: join(here, '..', 'renderer') });

  const socketPath = desktopSocketPath({ platform: process.platform, env: process.env, tmpdir: tmpdir(), user: userInfo().username });
  const supervisor = new ServiceSupervisor({
    nodePath: resolveNodeBinary({ isPackaged: app.isPackaged, resourcesPath: process.resourcesPath, env: process.env, platform: process.platform }),
    args: () => serviceArguments({ cliPath: serviceCliPath(app.getAppPath()), socketPath, logFile: join(app.getPath('logs'), 'service.log') }),
    env: { ...process.env, SALUS_CONFIG: settings.file },
    socketPath,
  });
  supervisor.on('output', (line: string) => console.log(line));

  const client = new ServiceClient(undefined, applySavedKnobs(settings));
  const window = setupWindow({
    BrowserWindow, screen, settings,
    preloadPath: join(here, 'preload.cjs'),
    iconPath: join(app.getAppPath(), 'assets', 'icons', 'png', '512x512.png'),
    // Called on page loads, which come after `service` below is set.
    onPageLoad: () => service.resync(),
  });
  panel = window;
  const service = setupServiceClient({ client, supervisor, settings, push: (channel, payload) => window.push(channel, payload) });
  setupIpc({ ipcMain, trustedWebContentsId: () => window.webContentsId(), handlers: createInvokeHandlers({ client, supervisor }) });
  setupNotifications({ Notification, client, supervisor, window });
  setupLifecycle({ app, platform: process.platform, showWindow: () => window.show(), stopService: () => supervisor.stop() });

  supervisor.start();
}
