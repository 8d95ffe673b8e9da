import { type Db, inTx } from "@holdfast/db";
import type { Publisher } from "@holdfast/queue";
import { crashpoint } from "../../base/crash";
import { outboxClaimUnsent, outboxMarkSent } from "../../store/sql/outbox";
import { publicationsOf } from "./publications";

export interface RelayResult {
  published: number;
}

/**
 * One relay batch: claim unsent outbox rows (SKIP LOCKED, so relays never wait on each other), publish them in bulk, each with
 * job id = outbox id (plus its creation time, so a reset database never reuses an id Redis still holds) or, for timers,
 * their own (publications.ts), mark them sent, commit. A crash between publish and commit republishes the batch; the job id
 * suppresses most repeats and every consumer tolerates the rest.
 */
export async function relayOnce(db: Db, publisher: Publisher, batchSize: number, stepReadyGraceMs = 0): Promise<RelayResult> {
  return inTx(db, async (tx) => {
    const rows = await outboxClaimUnsent(tx, batchSize, stepReadyGraceMs);
    if (rows.length === 0) return { published: 0 };
    // One bulk add per queue: the batch's jobs reach Redis in one round trip each, not one a row; the timers due at one
    // instant go as one job (publications.ts).
    await publisher.publishMany(publicationsOf(rows));
    crashpoint("relay.after_publish");
    await outboxMarkSent(tx, rows.map((r) => r.id));
    return { published: rows.length };
  });
}
