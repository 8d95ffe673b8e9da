import { type Db, inTx } from "@holdfast/db";
import type { Publisher } from "@holdfast/queue";
import { queueForTopic } from "../../base/catalog";
import { crashpoint } from "../../base/crash";
import { outboxClaimUnsent, outboxMarkSent } from "../../store/sql/outbox";

export interface RelayResult {
  published: number;
}

/**
 * One relay batch: claim unsent outbox rows (SKIP LOCKED, so relays never wait on each other), publish them in bulk, each with
 * job id = outbox id (plus its creation time, so a reset database never reuses an id Redis still holds), mark them sent, commit. A crash between publish and commit republishes the batch; the job id
 * suppresses most repeats and every consumer tolerates the rest.
 */
export async function relayOnce(db: Db, publisher: Publisher, batchSize: number, stepReadyGraceMs = 0): Promise<RelayResult> {
  return inTx(db, async (tx) => {
    const rows = await outboxClaimUnsent(tx, batchSize, stepReadyGraceMs);
    if (rows.length === 0) return { published: 0 };
    // One bulk add per queue: the batch's jobs reach Redis in one round trip each, not one a row.
    await publisher.publishMany(
      rows.map((row) => ({ queue: queueForTopic(row.topic, row.payload), name: row.topic, data: row.payload, options: { jobId: row.jobId, delayMs: row.delayMs } })),
    );
    crashpoint("relay.after_publish");
    await outboxMarkSent(tx, rows.map((r) => r.id));
    return { published: rows.length };
  });
}
