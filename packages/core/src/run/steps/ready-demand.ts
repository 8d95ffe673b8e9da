import type { Slots } from "./slots";

/**
 * Whether a lane worker owes its lane a look for due first steps (step.ready rows in the outbox). A notification (a
 * NOTIFY, a Redis announcement, a (re)subscription) makes one owed; a take that saw no due row left answers it. Two
 * takes answer it: the listener's own, into free slots (run/steps/ready-listener.ts), and a settle batch's, into the slots
 * its settles free (run/steps/settle-batch.ts: at peak no slot is ever free, and that take rides a commit made anyway).
 * A notification that comes while a take is on its way is not answered by that take: each take is judged by the
 * notifications counted before it was sent (`mark`).
 */
export class ReadyDemand {
  private owed = false;
  private notifications = 0;

  constructor(private readonly slots: Slots) {}

  /** A due row may be there. */
  notified(): void {
    this.owed = true;
    this.notifications += 1;
  }

  get isOwed(): boolean {
    return this.owed;
  }

  /**
   * A settle may ask to run a taken first step in its slot: a look is owed and no queue job waits for a slot (a job
   * waiting goes first, as it would when the slot freed).
   */
  settleMayTake(): boolean {
    return this.owed && this.slots.waiters === 0;
  }

  /** Before a take's statement goes: the count its answer is judged by. */
  mark(): number {
    return this.notifications;
  }

  /**
   * A take's answer. `more` false: it saw no due row left, so every notification before `mark` is answered. `more`
   * true: another look is owed (the listener's take looks again as soon as a slot frees).
   */
  answered(mark: number, more: boolean): void {
    if (more) this.owed = true;
    else if (mark === this.notifications) this.owed = false;
  }

  /** A take failed: what it was to answer is owed still. */
  failed(): void {
    this.owed = true;
  }
}
