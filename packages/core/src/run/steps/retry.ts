import type { RetryPolicy } from "../../base/catalog";
import type { SendHold, StepError, StepOutcome } from "../../base/outcome/outcome";

// What a provider answers is base/outcome/ (providers depend on no step code); re-exported for the step runner's callers.
export type { PendingEffect, SendHold, StepError, StepOutcome } from "../../base/outcome/outcome";
export { maxRetryAfterMs, parseRetryAfter } from "../../base/outcome/retry-after";

/** Exponential backoff with full jitter: anywhere in [0, min(cap, base * 2^attempt)). */
export function retryDelayMs(attempt: number, policy: Pick<RetryPolicy, "baseMs" | "capMs">, random = Math.random): number {
  const ceiling = Math.min(policy.capMs, policy.baseMs * 2 ** attempt);
  return random() * ceiling;
}

export type Settlement =
  | { kind: "settle"; output: unknown }
  | { kind: "retry"; error: StepError; delayMs: number }
  | { kind: "fail"; error: StepError }
  | { kind: "park"; error: StepError }
  | { kind: "defer"; reason: string; delayMs: number; hold?: SendHold };

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
      return { kind: "defer", reason: outcome.reason, delayMs: outcome.delayMs, ...(outcome.hold ? { hold: outcome.hold } : {}) };
    case "retry":
      if (attempt >= maxAttempts) {
        return { kind: "fail", error: { ...outcome.error, exhausted: true, attempts: attempt } };
      }
      return { kind: "retry", error: outcome.error, delayMs: outcome.retryAfterMs ?? retryDelayMs(attempt, policy, random) };
  }
}
