/**
 * The panel's window: locked down as Electron's security checklist says
 * (context isolation, sandbox, no Node, web security, no webviews, no
 * navigation on drop), loading the panel from `app://salus`, showing where it
 * was last time when that is still on a screen, and saving its bounds on close.
 */
import type { BrowserWindowConstructorOptions, Rectangle } from 'electron';
import { APP_ENTRY_URL } from './appProtocol.js';
import { PUSH_CHANNELS, type PushPayloads } from './desktopApi.js';
import type { SettingsStore, WindowBounds } from '../core/platform/settingsFile.js';

/** Smallest useful panel; also the floor for saved bounds. */
const MIN_WIDTH = 720;
const MIN_HEIGHT = 480;
const DEFAULT_BOUNDS: WindowBounds = { width: 1280, height: 820, maximized: false };
/** A saved position is kept only if this much of the window lands on some screen. */
const MIN_VISIBLE_PX = 64;

/** The parts of a BrowserWindow used here. */
export interface WindowLike {
  webContents: {
    id: number;
    send(channel: string, payload: unknown): void;
    isDestroyed(): boolean;
    on(event: 'did-finish-load', listener: () => void): unknown;
  };
  loadURL(url: string): Promise<void>;
  on(event: 'close' | 'closed', listener: () => void): unknown;
  once(event: 'ready-to-show', listener: () => void): unknown;
  show(): void;
  focus(): void;
  restore(): void;
  maximize(): void;
  isMinimized(): boolean;
  isMaximized(): boolean;
  isDestroyed(): boolean;
  getNormalBounds(): Rectangle;
}

/** The window's constructor options; every security-relevant flag stated, not left to defaults. */
export function windowOptions({ preloadPath, bounds, iconPath }: { preloadPath: string; bounds: WindowBounds; iconPath?: string }): BrowserWindowConstructorOptions {
  return {
    x: bounds.x,
    y: bounds.y,
    width: bounds.width,
    height: bounds.height,
    minWidth: MIN_WIDTH,
    minHeight: MIN_HEIGHT,
    title: 'Salus',
    icon: iconPath,
    show: false,
    webPreferences: {
      preload: preloadPath,
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      experimentalFeatures: false,
      webviewTag: false,
      navigateOnDragDrop: false,
      safeDialogs: true,
      spellcheck: false,
    },
  };
}

/** `saved` if a good part of it is on one of `workAreas`, else its size alone (the OS places it). */
export function visibleBounds(saved: WindowBounds | null, workAreas: Rectangle[]): WindowBounds {
  if (!saved) return { ...DEFAULT_BOUNDS };
  const size = { width: Math.max(MIN_WIDTH, saved.width), height: Math.max(MIN_HEIGHT, saved.height), maximized: saved.maximized };
  if (saved.x === undefined || saved.y === undefined) return size;
  const { x, y } = saved;
  const onScreen = workAreas.some((area) => {
    const overlapX = Math.min(x + size.width, area.x + area.width) - Math.max(x, area.x);
    const overlapY = Math.min(y + size.height, area.y + area.height) - Math.max(y, area.y);
    return overlapX >= MIN_VISIBLE_PX && overlapY >= MIN_VISIBLE_PX;
  });
  return onScreen ? { ...size, x, y } : size;
}

/** The one panel window: created on demand, shown, and the target of pushes. */
export interface WindowController {
  /** Shows and focuses the window, creating it if there is none. */
  show(): WindowLike;
  /** Sends a push to the renderer; drops it with no window (a job selection waits for a new window's page). */
  push<K extends keyof PushPayloads>(channel: K, payload: PushPayloads[K]): void;
  /** The id of the window's web contents, the only sender IPC accepts; null with no window. */
  webContentsId(): number | null;
}

export interface WindowSetup {
  BrowserWindow: new (options: BrowserWindowConstructorOptions) => WindowLike;
  screen: { getAllDisplays(): { workArea: Rectangle }[] };
  settings: Pick<SettingsStore, 'get' | 'update'>;
  preloadPath: string;
  iconPath?: string;
  url?: string;
  /** Runs each time the panel's page has loaded (after a reload too). */
  onPageLoad?: () => void;
  log?: (message: string) => void;
}

/** Creates the window now and returns its controller. */
export function setupWindow({ BrowserWindow, screen, settings, preloadPath, iconPath, url = APP_ENTRY_URL, onPageLoad, log = console.error }: WindowSetup): WindowController {
  let current: WindowLike | null = null;
  let loaded = false;
  let pendingSelection: string | null = null;

  const live = () => (current && !current.isDestroyed() && !current.webContents.isDestroyed() ? current : null);

  const create = (): WindowLike => {
    const bounds = visibleBounds(settings.get().window, screen.getAllDisplays().map((display) => display.workArea));
    const window = new BrowserWindow(windowOptions({ preloadPath, bounds, iconPath }));
    current = window;
    loaded = false;
    pendingSelection = null;
    window.once('ready-to-show', () => {
      if (bounds.maximized) window.maximize();
      window.show();
    });
    window.webContents.on('did-finish-load', () => {
      if (live() !== window) return;
      loaded = true;
      onPageLoad?.();
      if (pendingSelection !== null) window.webContents.send(PUSH_CHANNELS.selectJob, pendingSelection);
      pendingSelection = null;
    });
    window.on('close', () => {
      const normal = window.getNormalBounds();
      try {
        settings.update({
          window: {
            x: Math.round(normal.x), y: Math.round(normal.y),
            width: Math.max(MIN_WIDTH, Math.round(normal.width)), height: Math.max(MIN_HEIGHT, Math.round(normal.height)),
            maximized: window.isMaximized(),
          },
        });
      } catch (error) {
        log(`salus desktop: cannot save the window's bounds: ${(error as Error).message}`);
      }
    });
    window.on('closed', () => {
      if (current === window) current = null;
    });
    window.loadURL(url).catch((error: Error) => log(`salus desktop: cannot load ${url}: ${error.message}`));
    return window;
  };

  create();
  return {
    show() {
      const window = live() ?? create();
      if (window.isMinimized()) window.restore();
      window.show();
      window.focus();
      return window;
    },
    push(channel, payload) {
      const window = live();
      if (!window) return;
      if (loaded) window.webContents.send(PUSH_CHANNELS[channel], payload);
      // Before the page is up only a job selection is kept: the panel asks for a
      // snapshot, the connection state and the service status itself at start.
      else if (channel === 'selectJob') pendingSelection = payload as string;
    },
    webContentsId() {
      return live()?.webContents.id ?? null;
    },
  };
}
