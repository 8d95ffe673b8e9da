import { type Db, inTx } from "@holdfast/db";
import { runEventsInsert } from "../../store/sql/run-events";
import {
  consentWithdrawalsCarry,
  contactSendsCarry,
  effectsCarry,
  effectsChangedSince,
  effectsStatusOf,
  emailMessagesCarry,
  type LedgerRow,
  restoreLastWrite,
  runsPresent,
  suppressionsCarry,
} from "../../store/sql/restore-carry";
import { carriedNote, carriedRow, decideCarry } from "./carry-plan";
import { carryRunsStartedAfter } from "./carry-runs";

/** How far before the restored copy's last write the latest state is read (a transaction open across the point). */
export const restoreOverlapMs = 60 * 60 * 1000;

export interface RestoreReport {
  /** The restored database's last write (the restore point, as near as the database knows it). */
  restoredTo: string | null;
  effectsCarried: { settled: number; outcomeUnknown: number; needsReview: number };
  runsTouched: number;
  /** Runs started after the point, carried whole. */
  runsCarried: number;
  /** Contacts created after the point. */
  contacts: number;
  /** Runs that could not be carried and why: a person looks at them (docs/operations.md). */
  runsNotCarried: { runId: string; reason: string }[];
  /** Effects of runs the restored database still does not have: they happened; see the docs. */
  runsMissing: { runId: string; keys: string[] }[];
  emailMessages: number;
  contactSends: number;
  suppressions: number;
  consentWithdrawals: number;
}

/**
 * `holdfast restore reconcile`: after a point-in-time restore, the restored database takes from the archive's latest
 * state (`latest`, a second copy of the same backup replayed to the end of the archive) every record of what the
 * outside world saw after the point: runs started after it (whole, carry-runs.ts), effect ledger rows (decideCarry),
 * sent messages and their outcomes, the frequency cap's sends, suppressions and withdrawn consent. Each run whose ledger changed gets a `restore.effects_carried`
 * line on its timeline in the same transaction. Safe to run twice. Run it before any process starts on `restored`.
 */
export async function reconcileRestore(restored: Db, latest: Db, by = "restore"): Promise<RestoreReport> {
  const lastWrite = await restoreLastWrite(restored);
  const since = new Date((lastWrite?.getTime() ?? 0) - restoreOverlapMs);
  const runs = await carryRunsStartedAfter(restored, latest, since, lastWrite, by);
  const rows = await effectsChangedSince(latest, since);
  const known = await effectsStatusOf(restored, rows.map((r) => ({ org_id: r.org_id, key: r.key })));
  const present = await runsPresent(restored, [...new Set(rows.map((r) => r.run_id))]);
  const byRun = new Map<string, { orgId: string; rows: LedgerRow[] }>();
  const missing = new Map<string, string[]>();
  for (const row of rows) {
    const d = decideCarry(row.status, known.get(`${row.org_id} ${row.key}`), present.has(row.run_id));
    if (d.action === "skip") {
      if (d.why === "run_missing") missing.set(row.run_id, [...(missing.get(row.run_id) ?? []), row.key]);
      continue;
    }
    const run = byRun.get(row.run_id) ?? { orgId: row.org_id, rows: [] };
    run.rows.push(carriedRow(row, d.status));
    byRun.set(row.run_id, run);
  }
  const counts = { settled: 0, outcomeUnknown: 0, needsReview: 0 };
  let runsTouched = 0;
  for (const [runId, run] of byRun) {
    const written = await inTx(restored, async (tx) => {
      const done: { key: string; status: string }[] = [];
      for (const row of run.rows) if ((await effectsCarry(tx, row)) > 0) done.push({ key: row.key, status: row.status });
      if (done.length) {
        await runEventsInsert(tx, [
          { orgId: run.orgId, runId, type: "restore.effects_carried", worker: by, data: { note: carriedNote(lastWrite, done), effects: done, restoredTo: lastWrite?.toISOString() ?? null } },
        ]);
      }
      return done;
    });
    if (written.length) runsTouched++;
    for (const w of written) {
      if (w.status === "settled") counts.settled++;
      else if (w.status === "needs_review") counts.needsReview++;
      else counts.outcomeUnknown++;
    }
  }
  return {
    restoredTo: lastWrite?.toISOString() ?? null,
    effectsCarried: counts,
    runsTouched,
    runsCarried: runs.carried.length,
    contacts: runs.contacts,
    runsNotCarried: runs.failed,
    runsMissing: [...missing].map(([runId, keys]) => ({ runId, keys })),
    emailMessages: await emailMessagesCarry(latest, restored, since),
    contactSends: await contactSendsCarry(latest, restored, since),
    suppressions: await suppressionsCarry(latest, restored, since),
    consentWithdrawals: await consentWithdrawalsCarry(latest, restored, since),
  };
}
