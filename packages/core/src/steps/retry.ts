import type { RetryPolicy } from "../catalog";

/** Exponential backoff with full jitter: anywhere in [0, min(cap, base * 2^attempt)). */
export function retryDelayMs(attempt: number, policy: Pick<RetryPolicy, "baseMs" | "capMs">, random = Math.random): number {
  const ceiling = Math.min(policy.capMs, policy.baseMs * 2 ** attempt);
  return random() * ceiling;
}

/**
 * A Retry-After header in milliseconds: delta-seconds or an HTTP date. An HTTP date is measured against the
 * response's own Date header when present (the provider's clock), else against `nowMs`.
 */
/** A provider asking for more than a day is capped: the step comes back then and asks again. */
export const maxRetryAfterMs = 24 * 3600_000;

export function parseRetryAfter(value: string | null, responseDate: string | null, nowMs: number): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Math.min(maxRetryAfterMs, Number(trimmed) * 1000);
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  const reference = responseDate ? Date.parse(responseDate) : Number.NaN;
  return Math.min(maxRetryAfterMs, Math.max(0, at - (Number.isNaN(reference) ? nowMs : reference)));
}

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

export type Settlement =
  | { kind: "settle"; output: unknown }
  | { kind: "retry"; error: StepError; delayMs: number }
  | { kind: "fail"; error: StepError }
  | { kind: "park"; error: StepError }
  | { kind: "defer"; reason: string; delayMs: number };

/**
 * What to write for an outcome: retries stop at maxAttempts; the provider's Retry-After wins over the schedule.
 * `attempt` is the number of real attempts (the claim's token minus deferrals).
 */
export function settlementFor(
  outcome: StepOutcome,
  attempt: number,
  maxAttempts: number,
  policy: Pick<RetryPolicy, "baseMs" | "capMs">,
  random = Math.random,
): Settlement {
  switch (outcome.kind) {
    case "done":
      return { kind: "settle", output: outcome.output };
    case "fail":
      return { kind: "fail", error: outcome.error };
    case "park":
      return { kind: "park", error: outcome.error };
    case "defer":
      return { kind: "defer", reason: outcome.reason, delayMs: outcome.delayMs };
    case "retry":
      if (attempt >= maxAttempts) {
        return { kind: "fail", error: { ...outcome.error, exhausted: true, attempts: attempt } };
      }
      return { kind: "retry", error: outcome.error, delayMs: outcome.retryAfterMs ?? retryDelayMs(attempt, policy, random) };
  }
}
