/**
 * A lane worker's step slots, shared by every way a step reaches it (a BullMQ job, a step taken straight from the
 * outbox on a NOTIFY): never more steps at once than the lane's concurrency, so a claimed step never waits for one
 * of the hot path's connections. `acquire` waits for a slot; `tryAcquire` takes one only if it is free now.
 */
export class Slots {
  private used = 0;
  private readonly waiting: (() => void)[] = [];
  private readonly freedListeners = new Set<() => void>();

  constructor(readonly size: number) {}

  get free(): number {
    return Math.max(0, this.size - this.used - this.waiting.length);
  }

  /** Callers of `acquire` waiting for a slot. */
  get waiters(): number {
    return this.waiting.length;
  }

  tryAcquire(): boolean {
    if (this.used >= this.size || this.waiting.length > 0) return false;
    this.used++;
    return true;
  }

  acquire(): Promise<void> {
    if (this.tryAcquire()) return Promise.resolve();
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  release(): void {
    const next = this.waiting.shift();
    if (next) {
      next(); // the slot passes straight to the oldest waiter
      return;
    }
    this.used = Math.max(0, this.used - 1);
    for (const listener of this.freedListeners) listener();
  }

  /** Called whenever a slot becomes free (not when it passes to a waiter). */
  onFreed(listener: () => void): () => void {
    this.freedListeners.add(listener);
    return () => this.freedListeners.delete(listener);
  }
}
