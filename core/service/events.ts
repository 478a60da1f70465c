/**
 * Typed events, as VS Code writes them: an `Emitter<T>` owns its listeners
 * and fires; the `Event<T>` it hands out is what others subscribe with, and
 * each subscription returns the function that ends it.
 */

/** Subscribes `listener`; returns the function that unsubscribes it. */
export type Event<T> = (listener: (value: T) => void) => () => void;

/** The owner's side of an event. Listeners added while it fires hear the next value, not this one. */
export class Emitter<T> {
  private readonly listeners = new Set<(value: T) => void>();

  /** What subscribers call. */
  readonly event: Event<T> = (listener) => {
    this.listeners.add(listener);
    return () => { this.listeners.delete(listener); };
  };

  /** Calls every listener with `value`, in subscription order. */
  fire(value: T): void {
    for (const listener of [...this.listeners]) listener(value);
  }

  /** Whether anyone listens (work for no one can be skipped). */
  get hasListeners(): boolean {
    return this.listeners.size > 0;
  }

  /** Drops every listener. */
  dispose(): void {
    this.listeners.clear();
  }
}
