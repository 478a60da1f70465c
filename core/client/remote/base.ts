/** What every remote GPU object shares: its device's channel, its id and its label. */
import type { DeviceChannel } from './channel.js';

/** Thrown for WebGPU calls the service does not replay yet (external images): names the call. */
export function unsupported(what: string): never {
  throw new TypeError(`${what} is not supported yet by the Salus remote GPU, which serves WebGPU's compute, textures, samplers and render, not external images or canvases.`);
}

/**
 * When the job's garbage collector frees a remote object, the service frees the
 * real one (as dawn_wire's client does): a long job that drops bind groups,
 * encoders or buffers without `destroy()` leaks nothing on the shared device.
 * Passes are never registered, and encoders and command buffers leave the
 * registry at finish and submit: the service frees them there itself (a pass
 * with its encoder), so the registry costs nothing per pass and sends no
 * release for an id that is already gone.
 */
const released = new FinalizationRegistry<{ channel: DeviceChannel; id: number }>(({ channel, id }) => {
  channel.release(id);
});

/** A remote object: its id names the real object in the job's session on the service. */
export class RemoteObject {
  readonly #channel: DeviceChannel;
  readonly #id: number;
  #label: string;

  /** `tracked`: whether the garbage collector's freeing it is sent (false for objects the service frees on its own). */
  constructor(channel: DeviceChannel, id: number, label: string | undefined, tracked = true) {
    this.#channel = channel;
    this.#id = id;
    this.#label = label === undefined ? '' : String(label);
    // Id 0 is the queue, which lives as long as the device.
    if (id !== 0 && tracked) released.register(this, { channel, id }, this);
  }

  /** The service frees this object on its own from now on (finished, submitted): its garbage collection is not sent. */
  protected untrack(): void {
    released.unregister(this);
  }

  /** The device's channel. A prototype getter, as nothing of a WebGPU object is its own property. */
  get channel(): DeviceChannel { return this.#channel; }

  /** The object's id in the job's session. */
  get id(): number { return this.#id; }

  get label(): string { return this.#label; }

  set label(value: string) {
    this.#label = String(value);
    this.channel.record({ op: 'setLabel', id: this.id, label: this.#label });
  }
}

/** The id of a remote object passed to the API, or a TypeError naming what was expected. */
export function idOf(value: unknown, what: string): number {
  if (value instanceof RemoteObject) return value.id;
  throw new TypeError(`expected a ${what} from this Salus device, got ${value === null ? 'null' : typeof value}`);
}
