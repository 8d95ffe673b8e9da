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
  restoreOtherProcesses,
  restoreSystemId,
  runsPresent,
  suppressionsCarry,
} from "../../store/sql/restore-carry";
import { carriedNote, carriedRow, decideCarry } from "./carry-plan";
import { carryRunsStartedAfter } from "./carry-runs";

/** How far before the restore point the latest state is read (a transaction open across the point). */
export const restoreOverlapMs = 60 * 60 * 1000;

/** A restore that must not go on, in words an operator acts on. */
export class RestoreRefused extends Error {}

export interface RestoreOptions {
  /** The restore point: the instant given to PostgreSQL as recovery_target_time. Every later record is carried. */
  point: Date;
  by?: string;
}

export interface RestoreReport {
  /** The restore point (as given). */
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
 * outside world saw after the point: suppressions and withdrawn consent first (a failure part way must not lose an
 * unsubscribe), runs started after it (whole, carry-runs.ts), effect ledger rows (decideCarry), sent messages and
 * their outcomes, the frequency cap's sends. Each run whose ledger changed gets a `restore.effects_carried` line on
 * its timeline in the same transaction. The point is the operator's (the recovery target), never read back from the
 * rows this writes, so a second run after one that stopped part way carries the rest and nothing twice. It refuses
 * two databases that are not copies of one backup, and a restored database that Holdfast processes are already using.
 */
export async function reconcileRestore(restored: Db, latest: Db, options: RestoreOptions): Promise<RestoreReport> {
  const { point, by = "restore" } = options;
  const [mine, theirs] = [await restoreSystemId(restored), await restoreSystemId(latest)];
  if (mine !== theirs) {
    throw new RestoreRefused(`the two databases are not copies of one backup (system identifiers ${mine} and ${theirs}): --latest must be the same archive replayed to its end`);
  }
  const others = await restoreOtherProcesses(restored);
  if (others.length) {
    throw new RestoreRefused(`Holdfast processes are connected to the restored database (${others.join(", ")}): stop them; reconcile before any process starts`);
  }
  const lastWrite = point;
  const since = new Date(point.getTime() - restoreOverlapMs);
  const suppressions = await suppressionsCarry(latest, restored, since);
  const consentWithdrawals = await consentWithdrawalsCarry(latest, restored, since);
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
          { orgId: run.orgId, runId, type: "restore.effects_carried", worker: by, data: { note: carriedNote(lastWrite, done), effects: done, restoredTo: lastWrite.toISOString() } },
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
    restoredTo: point.toISOString(),
    effectsCarried: counts,
    runsTouched,
    runsCarried: runs.carried.length,
    contacts: runs.contacts,
    runsNotCarried: runs.failed,
    runsMissing: [...missing].map(([runId, keys]) => ({ runId, keys })),
    emailMessages: await emailMessagesCarry(latest, restored, since),
    contactSends: await contactSendsCarry(latest, restored, since),
    suppressions,
    consentWithdrawals,
  };
}
