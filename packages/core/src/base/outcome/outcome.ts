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
  /** Not started: no free slot on its connection. Given back at once (no attempt used), tried again after delayMs. */
  | { kind: "defer"; reason: string; delayMs: number };

export interface StepError {
  [key: string]: unknown;
  code: string;
  message: string;
}
