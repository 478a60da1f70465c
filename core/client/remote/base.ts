/** What every remote GPU object shares: its connection, its id and its label. */
import type { ServiceConnection } from '../connection.js';

/** Thrown for WebGPU features outside the compute subset that the service replays. */
export function unsupported(what: string): never {
  throw new TypeError(`${what} is not supported by the Salus remote GPU, which serves the WebGPU compute subset (buffers, compute pipelines, bind groups, queries).`);
}

/** A remote object: its id names the real object in the job's session on the service. */
export class RemoteObject {
  #label: string;

  constructor(readonly connection: ServiceConnection, readonly id: number, label: string | undefined) {
    this.#label = label ?? '';
  }

  get label(): string {
    return this.#label;
  }

  set label(value: string) {
    this.#label = String(value);
    this.connection.record({ op: 'setLabel', id: this.id, label: this.#label });
  }
}

/** The id of a remote object passed to the API, or a TypeError naming what was expected. */
export function idOf(value: unknown, what: string): number {
  if (value instanceof RemoteObject) return value.id;
  throw new TypeError(`expected a ${what} from this Salus device, got ${value === null ? 'null' : typeof value}`);
}
