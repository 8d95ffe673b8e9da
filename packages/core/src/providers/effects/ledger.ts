// Each ledger write is one statement, so each commits on its own without an interactive transaction's round trips.
import type { Db } from "@holdfast/db";
import { crashArmed, crashDuringMs, crashpoint } from "../../base/crash";
import { sleep } from "../../base/sleep";
import {
  type EffectClaim,
  type EffectClaimOrRead,
  effectsBeginAttempt,
  effectsClaimOrRead,
  effectsExpireLease,
  effectsMarkStarted,
  effectsMarkUnknown,
  effectsNeedsReview,
  effectsRelease,
  effectsSettleReconciled,
} from "../../store/sql/effects";
import type { StepOutcome } from "../../base/outcome/outcome";

/**
 * At least once, made idempotent. Every outside effect runs through its key (run/node/iteration):
 * - settled: the stored answer is returned, the provider is not called again;
 * - in flight under a live lease (another attempt may be calling right now): wait, never overlap;
 * - lease lapsed without a settle: outcome_unknown. Reconcile by key first; else re-send with the same key where
 *   the provider honours it; else park it as needs_review with what is known. Never a fresh effect.
 */
export interface EffectSpec extends EffectClaim {
  /**
   * Calls the provider with the effect key as its idempotency key. `begin()` must be awaited right before the
   * provider call (after templates, consent checks and budget reservations): for providers that cannot take a
   * repeat it records that the call began; false means the claim was taken over and nothing may be sent.
   */
  perform: (key: string, begin: () => Promise<boolean>) => Promise<StepOutcome>;
  /** Looks the effect up at the provider by key; null when it is not there. */
  reconcile?: (key: string) => Promise<unknown | null>;
  signal: AbortSignal;
  /**
   * The claim-or-read the step claim already made for this key in its own commit (holdfast_step_claim): the first
   * round uses it instead of a statement of its own. `used` tells the runner the claim was taken up.
   */
  preclaimed?: PreClaim | null;
}

export type PreClaim = EffectClaimOrRead & { used?: boolean };

export async function runEffect(db: Db, spec: EffectSpec): Promise<StepOutcome> {
  const { orgId, key, owner, leaseMs } = spec;
  for (let round = 0; round < 10_000 && !spec.signal.aborted; round++) {
    const pre = round === 0 ? spec.preclaimed : null;
    if (pre) pre.used = true;
    const found = pre ?? (await effectsClaimOrRead(db, spec));
    if (found.claimed) return attempt(db, spec);
    const row = found.row;
    switch (row.status) {
      case "settled":
        return replay(row.result, row.error);
      case "needs_review":
        return needsReview(spec, row.firstAttemptAt, row.attempts, row.error);
      case "in_flight":
        if (row.owner === owner) return attempt(db, spec); // our own claim (a repeated call in this attempt)
        if (row.leaseLeftMs > 0) {
          // Another attempt may be calling the provider right now: do not overlap it.
          await sleep(Math.min(row.leaseLeftMs + 5, 250), spec.signal);
          continue;
        }
        await effectsExpireLease(db, orgId, key, row.providerIdempotent ?? spec.providerIdempotent);
        continue;
      case "outcome_unknown": {
        if (spec.reconcile) {
          const there = await spec.reconcile(key);
          if (there !== null && there !== undefined) {
            await effectsSettleReconciled(db, orgId, key, there);
            return { kind: "done", output: there };
          }
        }
        if (row.providerIdempotent ?? spec.providerIdempotent) {
          const began = await effectsBeginAttempt(db, orgId, key, owner, leaseMs);
          if (began) return attempt(db, spec);
          continue; // someone else began first: read again
        }
        await effectsNeedsReview(db, orgId, key);
        return needsReview(spec, row.firstAttemptAt, row.attempts, row.error);
      }
    }
  }
  return { kind: "retry", error: { code: "effect_busy", message: `effect ${key} is still held by another attempt` } };
}

async function attempt(db: Db, spec: EffectSpec): Promise<StepOutcome> {
  const { orgId, key, owner } = spec;
  // Crash tests: die while the provider is working on the call: HOLDFAST_CRASH_DURING_MS after it began (begin() is
  // awaited right before the provider call, after logins and checks), before its answer.
  let during: NodeJS.Timeout | undefined;
  const begin = async () => {
    const began = spec.providerIdempotent || (await effectsMarkStarted(db, orgId, key, owner)) === 1;
    if (began && crashArmed("effect.during_call")) {
      during = setTimeout(() => crashpoint("effect.during_call"), crashDuringMs());
    }
    return began;
  };
  const outcome = await spec.perform(key, begin).finally(() => clearTimeout(during));
  if (outcome.kind === "park" || outcome.kind === "defer" || (outcome.kind === "fail" && outcome.error.notPerformed)) {
    // A refusal before anything was sent (a login refused, an address rejected): nothing to remember about the
    // effect, so the claim is given back and a later attempt (after a reconnect) is a plain first attempt.
    const reason = outcome.kind === "defer" ? { code: "deferred", message: outcome.reason } : outcome.error;
    if (!(await effectsRelease(db, orgId, key, owner))) await effectsMarkUnknown(db, orgId, key, owner, reason, spec.providerIdempotent);
    return outcome;
  }
  if (outcome.kind === "retry") {
    if (outcome.error.notPerformed) {
      // Certainly not performed (no connection, or refused): a first claim is given back, so the retry is a plain
      // first attempt; after an earlier uncertain attempt the effect stays uncertain.
      if (!(await effectsRelease(db, orgId, key, owner))) await effectsMarkUnknown(db, orgId, key, owner, outcome.error, spec.providerIdempotent);
      return outcome;
    }
    // No definite answer (timeout, reset, 500/502/504): the effect may have happened.
    await effectsMarkUnknown(db, orgId, key, owner, outcome.error, spec.providerIdempotent);
    return outcome;
  }
  // A definite answer, success or refusal, is the effect's result (a repeat replays it). It is recorded with the
  // step's settle, in the same commit, fenced by this owner token.
  return { ...outcome, effect: { orgId, key, owner } };
}

function replay(result: unknown, error: unknown): StepOutcome {
  if (error && typeof error === "object" && "code" in error) {
    return { kind: "fail", error: { ...(error as Record<string, unknown>), code: String((error as { code: unknown }).code), message: String((error as { message?: unknown }).message ?? ""), replayed: true } };
  }
  return { kind: "done", output: result };
}

function needsReview(spec: EffectSpec, firstAttemptAt: Date, attempts: number, error: unknown): StepOutcome {
  // Parked, not failed: the run waits (visibly, "needs review") for a person to check the provider and resolve it
  // (run/runs/resolve.ts: mark done with a note, send again with the same key, or abandon the step).
  const message = `effect ${spec.key} may or may not have happened; the provider cannot deduplicate it, so a person must check`;
  return {
    kind: "park",
    error: {
      code: "needs_review",
      message,
      reason: message,
      key: spec.key,
      firstAttemptAt: new Date(firstAttemptAt).toISOString(),
      attempts,
      lastError: error ?? null,
    },
  };
}
