import { type Db, inTx, type Tx } from "@holdfast/db";
import { HoldfastError } from "../../base/errors";
import { contactsSetZone } from "../../store/sql/contacts";
import { timersPendingOfContact, timersReschedule } from "../../store/sql/timers-pending";
import { instantFor } from "../../decide/timers/plan";
import { isValidZone, type WaitRule } from "../../decide/timers/schedule";

export class InvalidZoneError extends HoldfastError {
  constructor(zone: string) {
    super("invalid_zone", `"${zone}" is not a time zone: use an IANA name such as Europe/Berlin or America/New_York`);
  }
}

export interface ZoneChange {
  /** false: the contact already had this zone (a repeated click changes nothing). */
  changed: boolean;
  oldZone: string | null;
  zone: string | null;
  /** Pending waits moved to the new zone, each with its old and new instant on its run's timeline. */
  moved: number;
}

/**
 * A contact moved: the stored zone changes and every pending wait of the contact's running runs that counts in the
 * contact's zone (not a wait's own fixed zone) is recomputed from the same anchor in the new zone, in one
 * transaction. Clearing the zone (null) leaves pending waits where they are: they had a zone when they were planned.
 * Waits by duration do not depend on a zone and are left alone.
 */
export async function setContactZone(db: Db, orgId: string, contactId: string, zone: string | null, by: string): Promise<ZoneChange> {
  if (zone !== null && !isValidZone(zone)) throw new InvalidZoneError(zone);
  return inTx(db, async (tx) => {
    const change = await changeContactZone(tx, orgId, contactId, zone, by);
    if (!change) throw new HoldfastError("contact_not_found", "contact not found: it may have been erased; search again");
    return change;
  });
}

/**
 * The rule of `setContactZone` in the caller's transaction, for every path that changes a contact's zone (Settings,
 * the CLI, tRPC, and a delivery whose payload names another zone: run/start/start-run.ts). `zone` must be valid or null;
 * null result: no such contact. `by` ends the reason on each moved run's timeline.
 */
export async function changeContactZone(tx: Tx, orgId: string, contactId: string, zone: string | null, by: string): Promise<ZoneChange | null> {
  const set = await contactsSetZone(tx, orgId, contactId, zone);
  if (!set) return null;
  if (!set.changed || zone === null) return { changed: set.changed, oldZone: set.oldZone, zone, moved: 0 };
  let moved = 0;
  for (const t of await timersPendingOfContact(tx, orgId, contactId)) {
    const rule = t.rule as WaitRule;
    if (rule.kind === "duration") continue;
    const next = instantFor({ rule, zone, spreadSeconds: t.spreadSeconds, runId: t.runId, anchorAt: t.anchorAt });
    if (next.dueAt.getTime() === t.dueAt.getTime() && t.zone === zone) continue;
    if (await timersReschedule(tx, t, zone, next.dueAt, `the contact's time zone changed from ${set.oldZone ?? "none"} to ${zone} (by ${by})`)) moved++;
  }
  return { changed: true, oldZone: set.oldZone, zone, moved };
}
