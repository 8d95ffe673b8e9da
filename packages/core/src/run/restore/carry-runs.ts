import { type Db, inTx } from "@holdfast/db";
import { runEventsInsert } from "../../store/sql/run-events";
import { carriedColumns, type RunTable, runRowsInsert, runRowsOf, runsStartedSince, runTables } from "../../store/sql/restore-runs";
import { contactsCarry, runsPresent } from "../../store/sql/restore-carry";
import { carriedRow, decideCarry } from "./carry-plan";

export interface RunsCarried {
  carried: string[];
  /** Contacts created after the point (the carried runs may name them). */
  contacts: number;
  /** Runs that could not be carried, with the reason (e.g. their automation was published after the point). */
  failed: { runId: string; reason: string }[];
}

/**
 * Runs the latest state started at or after `since` that the restored database lacks are carried whole (after the
 * contacts created since, which they may name), each in one
 * transaction with a `restore.run_carried` line on its timeline: their webhooks were acknowledged, so no sender
 * repeats them. Their effects go through decideCarry like any other (a call in flight becomes outcome_unknown).
 */
export async function carryRunsStartedAfter(restored: Db, latest: Db, since: Date, restoredTo: Date | null, by: string): Promise<RunsCarried> {
  const started = await runsStartedSince(latest, since);
  const present = await runsPresent(restored, started.map((r) => r.id));
  const columns = new Map<RunTable, string[]>();
  for (const table of runTables) columns.set(table, await carriedColumns(restored, table));
  const out: RunsCarried = { carried: [], contacts: await contactsCarry(latest, restored, since), failed: [] };
  for (const run of started.filter((r) => !present.has(r.id))) {
    try {
      const tables = await Promise.all(runTables.map(async (table) => [table, await runRowsOf(latest, table, [run.id])] as const));
      await inTx(restored, async (tx) => {
        for (const [table, rows] of tables) {
          const shaped = table === "effects" ? rows.map((r) => carriedRow(r, (decideCarry(String(r.status), undefined, true) as { status: string }).status)) : rows;
          const inserted = await runRowsInsert(tx, table, columns.get(table) ?? [], shaped);
          // The run's own row first: without it (its start key taken meanwhile) nothing of it may land.
          if (table === "runs" && inserted !== 1) throw new Error("the restored database already has a run with this start key; look at both");
        }
        const point = restoredTo ? ` to ${restoredTo.toISOString()}` : "";
        await runEventsInsert(tx, [
          {
            orgId: run.orgId,
            runId: run.id,
            type: "restore.run_carried",
            worker: by,
            data: { note: `The database was restored from a backup${point}. This run started after that point; it was carried over whole from the archive, as it stood when the archive ends, and continues from there.` },
          },
        ]);
      });
      out.carried.push(run.id);
    } catch (error) {
      out.failed.push({ runId: run.id, reason: error instanceof Error ? error.message.split("\n").slice(-1)[0] ?? error.message : String(error) });
    }
  }
  return out;
}
