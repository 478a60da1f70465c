import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { eventsUrl, pickHost, takeToken } from '../../../renderer/src/api/host.js';
import { createWsApi, type SocketLike } from '../../../renderer/src/api/wsApi.js';
import type { SalusApi } from '../../../core/protocol/api.js';

/** A WebSocket the test drives by hand; every instance is recorded. */
class FakeSocket implements SocketLike {
  static all: FakeSocket[] = [];
  onopen: ((event: unknown) => void) | null = null;
  onclose: ((event: unknown) => void) | null = null;
  onerror: ((event: unknown) => void) | null = null;
  onmessage: ((event: { data: unknown }) => void) | null = null;
  sent: Array<{ id: number; method: string; params: unknown[] }> = [];
  closed = false;
  constructor(readonly url: string) {
    FakeSocket.all.push(this);
  }
  send(data: string): void {
    this.sent.push(JSON.parse(data));
  }
  close(): void {
    this.closed = true;
  }
  open(): void {
    this.onopen?.({});
  }
  receive(message: unknown): void {
    this.onmessage?.({ data: JSON.stringify(message) });
  }
  drop(): void {
    this.onerror?.({});
    this.onclose?.({});
  }
}

const latest = () => FakeSocket.all[FakeSocket.all.length - 1];

beforeEach(() => {
  FakeSocket.all = [];
  vi.useFakeTimers();
});
afterEach(() => vi.useRealTimers());

describe('createWsApi', () => {
  it('sends calls made while connecting once the socket opens, and resolves them by id', async () => {
    const api = createWsApi('ws://h/api/events?token=t', { WebSocket: FakeSocket });
    const killed = api.killJob('a1');
    const output = api.jobOutput('b2');
    expect(latest().sent).toEqual([]);
    latest().open();
    expect(latest().sent).toEqual([
      { id: 1, method: 'killJob', params: ['a1'] },
      { id: 2, method: 'jobOutput', params: ['b2'] },
    ]);
    latest().receive({ id: 2, result: 'hello\n' });
    latest().receive({ id: 1, result: null });
    await expect(output).resolves.toBe('hello\n');
    await expect(killed).resolves.toBeNull();
  });

  it('passes every argument as params and rejects with the service’s message', async () => {
    const api = createWsApi('ws://h/api/events', { WebSocket: FakeSocket });
    latest().open();
    const priority = api.setPriority('a1', 4);
    const policy = api.setPolicy('SRTF', { starvationMs: 500 });
    expect(latest().sent.map(({ method, params }) => [method, params])).toEqual([
      ['setPriority', ['a1', 4]],
      ['setPolicy', ['SRTF', { starvationMs: 500 }]],
    ]);
    latest().receive({ id: 1, error: { message: 'no such job: a1' } });
    await expect(priority).rejects.toThrow('no such job: a1');
    latest().receive({ id: 2, result: { name: 'SRTF', params: {}, knobs: [] } });
    await expect(policy).resolves.toMatchObject({ name: 'SRTF' });
  });

  it('delivers events to subscribers until they unsubscribe', () => {
    const api = createWsApi('ws://h/api/events', { WebSocket: FakeSocket });
    const seen: string[] = [];
    const stop = api.subscribe((event) => seen.push(event.type));
    latest().open();
    latest().receive({ event: { type: 'policy', policy: { name: 'FIFO', params: {}, knobs: [] } } });
    stop();
    latest().receive({ event: { type: 'policy', policy: { name: 'FIFO', params: {}, knobs: [] } } });
    latest().onmessage?.({ data: 'not json' });
    expect(seen).toEqual(['policy']);
  });

  it('rejects pending calls when the socket closes, then reconnects with growing delays', async () => {
    const api = createWsApi('ws://h/api/events', { WebSocket: FakeSocket, initialBackoffMs: 100, maxBackoffMs: 1000 });
    const states: string[] = [];
    api.onConnection((state) => states.push(state));
    latest().open();
    const pending = api.snapshot();
    latest().drop();
    await expect(pending).rejects.toThrow(/closed before it answered/);
    expect(api.state).toBe('closed');
    await expect(api.pauseJob('x')).rejects.toThrow(/Not connected/);

    // First retry after ≤100 ms (jitter takes up to a quarter off), then ≤200 ms.
    vi.advanceTimersByTime(74);
    expect(FakeSocket.all).toHaveLength(1);
    vi.advanceTimersByTime(26);
    expect(FakeSocket.all).toHaveLength(2);
    latest().drop();
    vi.advanceTimersByTime(149);
    expect(FakeSocket.all).toHaveLength(2);
    vi.advanceTimersByTime(51);
    expect(FakeSocket.all).toHaveLength(3);
    latest().open();
    expect(states).toEqual(['connecting', 'open', 'closed', 'connecting', 'closed', 'connecting', 'open']);
  });

  it('reconnects at once on demand, and not at all after close()', () => {
    const api = createWsApi('ws://h/api/events', { WebSocket: FakeSocket, initialBackoffMs: 5000 });
    latest().drop();
    api.reconnect();
    expect(FakeSocket.all).toHaveLength(2);
    api.reconnect(); // already connecting: no second socket
    expect(FakeSocket.all).toHaveLength(2);
    api.close();
    expect(latest().closed).toBe(true);
    vi.advanceTimersByTime(60_000);
    expect(FakeSocket.all).toHaveLength(2);
    expect(api.state).toBe('closed');
  });

  it('ignores a stale socket’s events after a newer one took over', () => {
    const api = createWsApi('ws://h/api/events', { WebSocket: FakeSocket, initialBackoffMs: 10 });
    const first = latest();
    first.drop();
    vi.advanceTimersByTime(10);
    const seen: unknown[] = [];
    api.subscribe((event) => seen.push(event));
    first.receive({ event: { type: 'jobs', jobs: [] } });
    first.onclose?.({});
    expect(seen).toEqual([]);
    expect(api.state).toBe('connecting');
  });
});

describe('host', () => {
  it('builds the bridge URL from the page’s host, scheme and token', () => {
    expect(eventsUrl({ protocol: 'http:', host: '127.0.0.1:7878' }, 'a+b')).toBe('ws://127.0.0.1:7878/api/events?token=a%2Bb');
    expect(eventsUrl({ protocol: 'https:', host: 'box' }, '')).toBe('wss://box/api/events?token=');
  });

  it('takes the token out of the address bar, keeps it for a reload, and leaves other parameters', () => {
    const stored = new Map<string, string>();
    const page = {
      location: { search: '?view=memory&token=s3cret', pathname: '/', hash: '#jobs' },
      history: { state: null, replaceState: vi.fn() },
      sessionStorage: { getItem: (k: string) => stored.get(k) ?? null, setItem: (k: string, v: string) => void stored.set(k, v) },
    } as unknown as Window;
    expect(takeToken(page)).toBe('s3cret');
    expect(page.history.replaceState).toHaveBeenCalledWith(null, '', '/?view=memory#jobs');
    const reloaded = { ...page, location: { search: '?view=memory', pathname: '/', hash: '' } } as unknown as Window;
    expect(takeToken(reloaded)).toBe('s3cret');
  });

  it('prefers window.salus, without a reconnect of its own', () => {
    const injected = {} as SalusApi;
    const host = pickHost({ salus: injected } as unknown as Window & { salus: SalusApi });
    expect(host).toEqual({ kind: 'preload', api: injected });
  });
});
