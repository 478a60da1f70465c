// The app's lifetime with a fake app: one instance, quitting waits for the
// service to stop, macOS keeps running without windows.
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { setupLifecycle, setupSingleInstance, type LifecycleApp } from '../../../electron/lifecycle.js';

class FakeApp extends EventEmitter {
  quits = 0;
  constructor(private readonly lock: boolean) { super(); }
  requestSingleInstanceLock() { return this.lock; }
  quit() {
    this.quits += 1;
    let prevented = false;
    this.emit('before-quit', { preventDefault: () => { prevented = true; } });
    return prevented;
  }
}

describe('setupSingleInstance', () => {
  it('quits a second instance at once', () => {
    const app = new FakeApp(false);
    expect(setupSingleInstance({ app: app as LifecycleApp, onSecondInstance: () => {} })).toBe(false);
    expect(app.quits).toBe(1);
  });

  it('focuses the first instance when a second one starts', () => {
    const app = new FakeApp(true);
    let focused = 0;
    expect(setupSingleInstance({ app: app as LifecycleApp, onSecondInstance: () => { focused += 1; } })).toBe(true);
    app.emit('second-instance');
    expect(focused).toBe(1);
  });
});

describe('setupLifecycle', () => {
  it('holds the quit until the service has stopped, then quits for real', async () => {
    const app = new FakeApp(true);
    let stops = 0;
    let finishStop!: () => void;
    setupLifecycle({
      app: app as LifecycleApp, platform: 'linux', showWindow: () => {},
      stopService: () => { stops += 1; return new Promise<void>((resolve) => { finishStop = resolve; }); },
    });
    expect(app.quit()).toBe(true); // prevented: the service is still stopping
    expect(app.quit()).toBe(true); // a second Cmd+Q does not stop it twice
    expect(stops).toBe(1);
    finishStop();
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(app.quits).toBe(3); // the lifecycle's own quit, allowed this time
  });

  it('quits when the last window closes, except on macOS, where activate reopens it', () => {
    const linux = new FakeApp(true);
    setupLifecycle({ app: linux as LifecycleApp, platform: 'linux', showWindow: () => {}, stopService: async () => {} });
    linux.emit('window-all-closed');
    expect(linux.quits).toBe(1);

    const mac = new FakeApp(true);
    let shown = 0;
    setupLifecycle({ app: mac as LifecycleApp, platform: 'darwin', showWindow: () => { shown += 1; }, stopService: async () => {} });
    mac.emit('window-all-closed');
    mac.emit('activate');
    expect(mac.quits).toBe(0);
    expect(shown).toBe(1);
  });
});
