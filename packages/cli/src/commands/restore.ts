import { RestoreRefused, reconcileRestore } from "@holdfast/core/run";
import { createDb, type Db } from "@holdfast/db";
import { type CommandInput, UsageError } from "../command-line";

const shape = "restore reconcile --point <the recovery_target_time, e.g. 2026-12-05T14:02:00Z> --latest <url of a copy replayed to the end of the archive> [--json]";

/**
 * `restore reconcile --latest URL`: after a point-in-time restore (DATABASE_URL), carries every record of what the
 * outside world saw after the restore point from the archive's latest state, before any process starts
 * (run/restore/reconcile.ts; docs/operations.md "Backup and restore").
 */
export async function restoreCommand(db: Db, { sub, rest, values }: CommandInput): Promise<void> {
  if (sub !== "reconcile" || rest.length || typeof values.latest !== "string" || !values.latest) throw new UsageError(shape);
  const point = typeof values.point === "string" ? new Date(values.point) : null;
  if (!point || Number.isNaN(point.getTime())) throw new UsageError(`${shape}\n--point is the instant the database was restored to (its recovery_target_time), with its zone`);
  const latest = createDb(values.latest, { poolSize: 2, applicationName: "holdfast-cli-restore" });
  try {
    const report = await reconcileRestore(db, latest, { point }).catch((error: unknown) => {
      if (error instanceof RestoreRefused) {
        console.error(`not reconciled: ${error.message}`);
        process.exit(65);
      }
      throw error;
    });
    if (values.json) {
      console.log(JSON.stringify(report, null, 2));
      return;
    }
    const c = report.effectsCarried;
    console.log(`restore point: ${report.restoredTo}`);
    console.log(`effects carried from the latest state: ${c.settled} done, ${c.outcomeUnknown} outcome unknown, ${c.needsReview} needing review (${report.runsTouched} runs)`);
    console.log(`email messages ${report.emailMessages}, frequency-cap sends ${report.contactSends}, suppressions ${report.suppressions}, consent withdrawals ${report.consentWithdrawals}`);
    console.log(`runs started after the restore point, carried whole: ${report.runsCarried}`);
    for (const f of report.runsNotCarried) console.log(`  NOT carried: ${f.runId}: ${f.reason}`);
    if (report.runsMissing.length) {
      console.log(`${report.runsMissing.length} runs started after the restore point are not in the restored database; their effects happened:`);
      for (const m of report.runsMissing.slice(0, 20)) console.log(`  ${m.runId}  ${m.keys.join(", ")}`);
      console.log("ask the senders to redeliver their webhooks (docs/operations.md, Backup and restore)");
    }
  } finally {
    await latest.$disconnect();
  }
}
