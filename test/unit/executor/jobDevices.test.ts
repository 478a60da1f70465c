// A job's devices on a real shared device: creating and switching (configureDevice,
// useDevice), the limit on how many, forgetting a destroyed one, and where the
// errors of each go (to the job, naming the device that was current).
import { describe, expect, it } from 'vitest';
import { useFileDevice } from '../../helpers/fileDevice.js';
import { JobDevices, MAX_DEVICES_PER_JOB, TOO_MANY_DEVICES } from '../../../core/executor/jobDevices.js';
import type { GpuErrorJson } from '../../../core/protocol/commands.js';
import type { DeviceConfig } from '../../../core/executor/objects.js';

const file = useFileDevice('job devices tests');

const CONFIG: DeviceConfig = { features: new Set(), limits: {} };

/** Devices whose uncaptured errors (with the device id) and error count are recorded. */
function devices(): { devices: JobDevices; uncaptured: Array<[GpuErrorJson, number]>; errors: () => number } {
  const uncaptured: Array<[GpuErrorJson, number]> = [];
  let errors = 0;
  const made = new JobDevices(file.device, (error, id) => uncaptured.push([error, id]), () => errors++);
  return { devices: made, uncaptured, errors: () => errors };
}

/** Runs `work` inside a segment of the current device's scopes, as the session does (its errors are dispatched at the close). */
async function inSegment(made: JobDevices, work: () => void): Promise<void> {
  made.current.scopes.openSegment();
  work();
  made.current.scopes.closeSegment();
}

describe('JobDevices', () => {
  it('starts with device 1, current and unconfigured', () => {
    const { devices: made } = devices();
    expect([made.count, made.current.id, made.current.config, made.scopeDepth]).toEqual([1, 1, null, 0]);
  });

  it('configureDevice makes a new device current; useDevice goes back to one the job has', async () => {
    const { devices: made, uncaptured } = devices();
    const first = made.current;
    await inSegment(made, () => {
      expect(made.switchTo(2, CONFIG)).toBe(true);
      expect([made.count, made.current.id, made.current.config]).toEqual([2, 2, CONFIG]);
      expect(made.switchTo(1, null)).toBe(true);
    });
    expect(made.current).toBe(first);
    expect(made.count).toBe(2);
    expect(uncaptured).toEqual([]);
  });

  it('useDevice of a device the job does not have changes nothing and is a validation error for the job', async () => {
    const { devices: made, uncaptured, errors } = devices();
    await inSegment(made, () => expect(made.switchTo(3, null)).toBe(false));
    expect(made.current.id).toBe(1);
    expect(uncaptured).toEqual([[{ type: 'validation', message: 'useDevice: the job has no device 3 (never created, or destroyed)' }, 1]]);
    expect(errors()).toBe(1);
  });

  it('refuses a device past MAX_DEVICES_PER_JOB, saying so, and still switches among those it has', async () => {
    const { devices: made, uncaptured } = devices();
    await inSegment(made, () => {
      for (let id = 2; id <= MAX_DEVICES_PER_JOB; id++) expect(made.switchTo(id, CONFIG)).toBe(true);
      expect(made.count).toBe(MAX_DEVICES_PER_JOB);
      expect(made.switchTo(MAX_DEVICES_PER_JOB + 1, CONFIG)).toBe(false);
    });
    expect(uncaptured).toEqual([[{ type: 'validation', message: `configureDevice: ${TOO_MANY_DEVICES}` }, MAX_DEVICES_PER_JOB]]);
    expect(made.switchTo(1, null)).toBe(true);
    expect(made.switchTo(1, CONFIG)).toBe(true); // configuring a device it has needs no room
  });

  it('forgets a destroyed device: it stays current until the next is named, and cannot be named again but by configuring it', async () => {
    const { devices: made, uncaptured } = devices();
    await inSegment(made, () => {
      made.switchTo(2, CONFIG);
      made.forgetCurrent();
      expect([made.count, made.current.id]).toEqual([1, 2]);
      expect(made.switchTo(2, null)).toBe(false);
    });
    expect(uncaptured.map(([error, id]) => [error.message, id])).toEqual([['useDevice: the job has no device 2 (never created, or destroyed)', 2]]);
    expect(made.switchTo(2, CONFIG)).toBe(true);
    expect(made.count).toBe(2);
  });

  it('counts the error scopes open on all its devices, each device its own stack', async () => {
    const { devices: made, uncaptured } = devices();
    made.current.scopes.push('validation');
    made.switchTo(2, CONFIG);
    made.current.scopes.push('validation');
    made.current.scopes.push('out-of-memory');
    expect(made.scopeDepth).toBe(3);
    // An error on device 2 goes to its innermost validation scope, not to device 1's.
    await inSegment(made, () => made.current.scopes.report({ type: 'validation', message: 'on device 2' }));
    expect(await made.current.scopes.pop()).toBeNull();
    expect(await made.current.scopes.pop()).toEqual({ type: 'validation', message: 'on device 2' });
    made.switchTo(1, null);
    expect(await made.current.scopes.pop()).toBeNull();
    expect([made.scopeDepth, uncaptured]).toEqual([0, []]);
  });
});
