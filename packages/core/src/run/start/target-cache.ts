import type { StartTarget } from "../../store/sql/automations";

/**
 * The start targets (store/sql/automations.ts) a process read for its latest trigger URLs, so that a start of a URL it
 * knows is one statement and one commit, not a read and a write. A kept answer is never trusted on its own: the
 * statement that starts the run finds nothing to do unless holdfast_start_target still answers the same fingerprint
 * (startTargetGuard), and the starter then reads again. So a pause, a rotated or expired credential, a new version or
 * a renamed slug takes effect for the very next start, as it did when every start read first.
 *
 * Only answers the one-statement start can use are kept: an automation open to deliveries with a published version,
 * after a start through it succeeded (so requests without its credential cannot fill the cache).
 */
export class StartTargetCache {
  private readonly kept = new Map<string, { target: StartTarget; readAt: number }>();

  constructor(private readonly capacity = 1_000) {}

  /** The kept answer, its database clock moved on by the time since it was read (the guard judges by the real one). */
  get(orgSlug: string, automationSlug: string): StartTarget | undefined {
    const key = keyOf(orgSlug, automationSlug);
    const entry = this.kept.get(key);
    if (!entry) return undefined;
    this.kept.delete(key); // the latest used goes last: the first key is the least recently used
    this.kept.set(key, entry);
    return { ...entry.target, now: entry.target.now + (performance.now() - entry.readAt) / 1000 };
  }

  /** Keeps an answer read at `readAt` (performance.now()), when a start can use it. */
  keep(orgSlug: string, automationSlug: string, target: StartTarget, readAt: number): void {
    const key = keyOf(orgSlug, automationSlug);
    this.kept.delete(key);
    if (target.gate !== "active" || target.versionId === null) return;
    if (this.kept.size >= this.capacity) this.kept.delete(this.kept.keys().next().value as string);
    this.kept.set(key, { target, readAt });
  }

  drop(orgSlug: string, automationSlug: string): void {
    this.kept.delete(keyOf(orgSlug, automationSlug));
  }

  get size(): number {
    return this.kept.size;
  }
}

// A newline is in no slug (the routes take [a-z0-9-]; the CLI's are looked up as given and just miss).
const keyOf = (orgSlug: string, automationSlug: string) => `${orgSlug}\n${automationSlug}`;
