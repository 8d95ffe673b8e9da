/**
 * Which effect ledger rows of the archive's latest state a restored database must take (pure). The restored copy
 * stops at a point in time; whatever the product did to the outside world after it is only in the latest state.
 * A row is carried when it is further along there: in flight < outcome unknown < needs review < settled.
 * - settled there: carried as settled with its stored answer, so the run's next visit replays it and sends nothing;
 * - in flight there (the call may have reached the provider when the archive ends): carried as outcome_unknown, so the
 *   ledger decides (reconcile by key, re-send with the same key where the provider drops repeats, else a person);
 * - needs review there: carried as it is;
 * - a run the restored database does not have (started after the point) cannot take it: reported, not carried.
 */
export type CarryDecision =
  | { action: "carry"; status: "settled" | "outcome_unknown" | "needs_review" }
  | { action: "skip"; why: "already_known" | "run_missing" };

const rank: Record<string, number> = { in_flight: 0, outcome_unknown: 1, needs_review: 2, settled: 3 };

export function decideCarry(latestStatus: string, restoredStatus: string | undefined, runPresent: boolean): CarryDecision {
  if (!runPresent) return { action: "skip", why: "run_missing" };
  const status = latestStatus === "settled" ? "settled" : latestStatus === "needs_review" ? "needs_review" : "outcome_unknown";
  if (restoredStatus !== undefined && (rank[restoredStatus] ?? 0) >= rank[status]!) return { action: "skip", why: "already_known" };
  return { action: "carry", status };
}

/** The row as written into the restored ledger: no owner or lease (nobody holds it there). */
export function carriedRow<T extends Record<string, unknown>>(row: T, status: string): T {
  return { ...row, status, owner: null, lease_until: null };
}

/** The timeline line of a run whose effects were carried, in plain words. */
export function carriedNote(restoredTo: Date | null, keys: { key: string; status: string }[]): string {
  const words = (s: string) => (s === "settled" ? "done" : s === "needs_review" ? "waiting for a person to check it" : "outcome unknown: the ledger checks before any repeat");
  const point = restoredTo ? ` to ${restoredTo.toISOString()}` : "";
  const list = keys.map((k) => `${k.key} (${words(k.status)})`).join(", ");
  return `The database was restored from a backup${point}. ${keys.length === 1 ? "An effect" : `${keys.length} effects`} of this run happened after that point and ${keys.length === 1 ? "was" : "were"} carried over from the archive, so ${keys.length === 1 ? "it is" : "they are"} not repeated: ${list}.`;
}
