/**
 * What a step's work answers, as every provider (run/connectors/, providers/effects/, the egress guard) reports it. The step runner
 * (run/steps/retry.ts settlementFor) turns it into what is written; providers import only this, never step code.
 */

/** An effect claimed by this attempt whose answer is to be recorded with the step's settle (same commit). */
export interface PendingEffect {
  orgId: string;
  key: string;
  owner: string;
}

export type StepOutcome =
  /** `skipped`: the step decided not to act (a suppressed contact); the timeline says why. */
  | { kind: "done"; output: unknown; effect?: PendingEffect; skipped?: { reason: string } }
  /** Worth another attempt: network errors, timeouts, 5xx, 429 (with the provider's Retry-After when given). */
  | { kind: "retry"; error: StepError; retryAfterMs?: number }
  /** Will not change by retrying: 4xx, authorisation, bad configuration. */
  | { kind: "fail"; error: StepError; effect?: PendingEffect }
  /** Waits for a person (reconnect the mailbox): not retried, not failed; resumed from the same step. */
  | { kind: "park"; error: StepError & { reason: string; connectionId?: string } }
  /**
   * Not started: no free slot on its connection, or a sending rule holds it (`hold`). Given back at once (no attempt
   * used), tried again after delayMs.
   */
  | { kind: "defer"; reason: string; delayMs: number; hold?: SendHold };

/**
 * A send held by a sending rule (issue 44) until an instant: quiet hours (the next opening in the contact's zone,
 * with its deterministic spread) or the frequency cap (the next instant the cap allows). Written on the step's
 * step.deferred timeline row, from which the run page says it in words and a test run's page offers to skip it.
 */
export interface SendHold {
  rule: "quiet_hours" | "frequency_cap";
  /** The instant the send is tried again (ISO 8601, UTC). */
  until: string;
  /** The zone the rule counted in (quiet hours: the contact's), or null. */
  zone: string | null;
  /** Where the zone came from, in words ("the contact's stored time zone"), or null. */
  zoneSource: string | null;
  /** The reason in plain words, without the instant ("quiet hours: sends go out Mon-Fri 08:00-20:00"). */
  words: string;
}

export interface StepError {
  [key: string]: unknown;
  code: string;
  message: string;
}
