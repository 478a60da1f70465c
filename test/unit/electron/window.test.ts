// The window with a fake BrowserWindow and screen: its security flags, where
// it opens, what it saves on close, and where pushes go.
import { EventEmitter } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserWindowConstructorOptions, Rectangle } from 'electron';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SettingsStore } from '../../../core/platform/settingsFile.js';
import { setupWindow, visibleBounds, windowOptions } from '../../../electron/window.js';

/** A BrowserWindow stand-in: records what the module does and lets a test fire its events. */
class FakeWindow extends EventEmitter {
  static created: FakeWindow[] = [];
  static nextId = 1;
  readonly sent: Array<[string, unknown]> = [];
  readonly loaded: string[] = [];
  minimized = false;
  maximized = false;
  destroyed = false;
  visible = false;
  focused = false;
  bounds: Rectangle;
  readonly webContents = Object.assign(new EventEmitter(), {
    id: FakeWindow.nextId++,
    send: (channel: string, payload: unknown) => { this.sent.push([channel, payload]); },
    isDestroyed: () => this.destroyed,
  });
  constructor(readonly options: BrowserWindowConstructorOptions) {
    super();
    this.bounds = { x: options.x ?? 100, y: options.y ?? 100, width: options.width ?? 800, height: options.height ?? 600 };
    FakeWindow.created.push(this);
  }
  async loadURL(url: string) { this.loaded.push(url); }
  show() { this.visible = true; }
  focus() { this.focused = true; }
  restore() { this.minimized = false; }
  maximize() { this.maximized = true; }
  isMinimized() { return this.minimized; }
  isMaximized() { return this.maximized; }
  isDestroyed() { return this.destroyed; }
  getNormalBounds() { return this.bounds; }
  /** What happens when the user closes it. */
  close() {
    this.emit('close');
    this.destroyed = true;
    this.emit('closed');
  }
}

const screen = { getAllDisplays: () => [{ workArea: { x: 0, y: 0, width: 1920, height: 1080 } }] };

describe('window options', () => {
  it('states every security flag Electron’s checklist asks for', () => {
    const options = windowOptions({ preloadPath: '/app/dist/electron/preload.cjs', bounds: { width: 1000, height: 700, maximized: false } });
    expect(options.webPreferences).toMatchObject({
      preload: '/app/dist/electron/preload.cjs',
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      navigateOnDragDrop: false,
      experimentalFeatures: false,
    });
    expect(options.show).toBe(false);
  });

  it('reopens where it was if that is on a screen, else lets the OS place it', () => {
    const areas = [{ x: 0, y: 0, width: 1920, height: 1080 }, { x: 1920, y: 0, width: 1280, height: 1024 }];
    expect(visibleBounds(null, areas)).toEqual({ width: 1280, height: 820, maximized: false });
    expect(visibleBounds({ x: 2000, y: 50, width: 900, height: 700, maximized: false }, areas)).toEqual({ x: 2000, y: 50, width: 900, height: 700, maximized: false });
    // A monitor that is gone: keep the size, drop the position.
    expect(visibleBounds({ x: 5000, y: 50, width: 900, height: 700, maximized: true }, areas)).toEqual({ width: 900, height: 700, maximized: true });
    // Barely peeking in at a corner does not count as visible.
    expect(visibleBounds({ x: -880, y: -680, width: 900, height: 700, maximized: false }, areas)).not.toHaveProperty('x');
  });
});

describe('setupWindow', () => {
  let dir: string;
  let settings: SettingsStore;
  beforeEach(() => {
    FakeWindow.created = [];
    dir = mkdtempSync(join(tmpdir(), 'salus-window-'));
    settings = SettingsStore.load(join(dir, 'settings.json'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const open = () => setupWindow({ BrowserWindow: FakeWindow, screen, settings, preloadPath: '/p/preload.cjs', log: () => {} });

  it('loads the panel from app://salus and shows it once ready, maximized if it was', () => {
    settings.update({ window: { x: 10, y: 20, width: 1000, height: 700, maximized: true } });
    open();
    const [window] = FakeWindow.created;
    expect(window.loaded).toEqual(['app://salus/index.html']);
    expect(window.options).toMatchObject({ x: 10, y: 20, width: 1000, height: 700 });
    expect(window.visible).toBe(false);
    window.emit('ready-to-show');
    expect(window.visible).toBe(true);
    expect(window.maximized).toBe(true);
  });

  it('saves its bounds to the settings file when closed', () => {
    open();
    const [window] = FakeWindow.created;
    window.bounds = { x: 33, y: 44, width: 1111.4, height: 777 };
    window.maximized = true;
    window.close();
    expect(SettingsStore.load(join(dir, 'settings.json')).get().window).toEqual({ x: 33, y: 44, width: 1111, height: 777, maximized: true });
  });

  it('pushes to the page once loaded, keeping only a job selection from before', () => {
    const controller = open();
    const [window] = FakeWindow.created;
    controller.push('connection', 'open');
    controller.push('selectJob', 'j3');
    expect(window.sent).toEqual([]);
    window.webContents.emit('did-finish-load');
    controller.push('connection', 'closed');
    expect(window.sent).toEqual([['salus:select-job', 'j3'], ['salus:connection', 'closed']]);
  });

  it('tells the app each time the page has loaded, so it can resync the panel', () => {
    let loads = 0;
    setupWindow({ BrowserWindow: FakeWindow, screen, settings, preloadPath: '/p/preload.cjs', onPageLoad: () => { loads += 1; }, log: () => {} });
    const [window] = FakeWindow.created;
    window.webContents.emit('did-finish-load');
    window.webContents.emit('did-finish-load'); // a reload
    expect(loads).toBe(2);
  });

  it('names its web contents as the only trusted sender, and none once closed', () => {
    const controller = open();
    const [window] = FakeWindow.created;
    expect(controller.webContentsId()).toBe(window.webContents.id);
    window.close();
    expect(controller.webContentsId()).toBeNull();
    controller.push('connection', 'open');
    expect(window.sent).toEqual([]);
  });

  it('show() restores and focuses the window, or opens a new one after it was closed', () => {
    const controller = open();
    const [first] = FakeWindow.created;
    first.minimized = true;
    expect(controller.show()).toBe(first);
    expect(first).toMatchObject({ minimized: false, visible: true, focused: true });
    first.close();
    const second = controller.show();
    expect(second).not.toBe(first);
    expect(FakeWindow.created).toHaveLength(2);
    expect(controller.webContentsId()).toBe((second as FakeWindow).webContents.id);
  });
});
