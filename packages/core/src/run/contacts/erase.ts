import type { Db } from "@holdfast/db";
import { inTx } from "@holdfast/db";
import { requestCancel } from "../runs/cancel";
import { contactSendsEraseAddress } from "../../store/sql/contact-sends";
import { contactsEraseData, contactsRunningRuns } from "../../store/sql/contacts";
import type { GraphCache } from "../../versions/graph-cache";

export interface EraseOutcome {
  found: boolean;
  /** Runs stopped now, and runs that stop once the effect in flight settles. */
  cancelled: number;
  cancelRequested: number;
  /** Runs whose stored payloads, outputs, effect results and timeline data were scrubbed. */
  scrubbed: number;
}

/**
 * Erasing a contact (a right-to-erasure request): every running run about the contact is cancelled (waiting runs at
 * once; a run with an effect in flight when that effect settles), then its data is removed from stored payloads,
 * step outputs and errors, effect results and timeline data; the contact row stays as a tombstone keyed by the
 * address's hash, and the suppression entry becomes that hash, so the person is still never written to again.
 * Idempotent: run it again after the in-flight effects settled to scrub what they recorded.
 */
export async function eraseContact(db: Db, graphs: GraphCache, orgId: string, email: string, by: string): Promise<EraseOutcome> {
  const runs = await contactsRunningRuns(db, orgId, email);
  let cancelled = 0;
  let cancelRequested = 0;
  for (const run of runs) {
    const outcome = await requestCancel(db, graphs, orgId, run.id, "contact erased", by);
    if (outcome.state === "cancelled") cancelled++;
    if (outcome.state === "requested") cancelRequested++;
  }
  const { found, scrubbed } = await inTx(db, async (tx) => {
    await contactSendsEraseAddress(tx, orgId, email); // the frequency cap's record of the address (issue 44)
    return contactsEraseData(tx, orgId, email, by);
  });
  return { found, cancelled, cancelRequested, scrubbed };
}
