import { type Db, inTx } from "@holdfast/db";
import { HoldfastError } from "../errors";
import { type Consent, contactsLockByEmail, contactsLockById, contactsUpsertConsent } from "../sql/contacts";
import type { Role } from "../sql/memberships";
import { changeContactZone, InvalidZoneError, type ZoneChange } from "../timers/contact-zone";
import { isValidZone } from "../timers/schedule";
import { ContactChangeForbiddenError, contactChangeRefusal } from "./rules";

/** A member changing contacts: their role in the organisation now, and who they are for the runs' timelines. */
export interface ContactActor {
  role: Role;
  by: string;
}

/**
 * Adds a contact with its zone and consent, or sets an existing one's consent and (when `timeZone` is not null) its
 * zone, moving its pending waits; as `actor` may (contacts/rules.ts), judged on the contact's row locked in the same
 * transaction: a refusal writes nothing.
 */
export async function upsertContact(
  db: Db,
  actor: ContactActor,
  c: { orgId: string; email: string; timeZone: string | null; consent: Consent },
): Promise<{ id: string; zone: ZoneChange | null }> {
  if (c.timeZone !== null && !isValidZone(c.timeZone)) throw new InvalidZoneError(c.timeZone);
  return inTx(db, async (tx) => {
    const before = await contactsLockByEmail(tx, c.orgId, c.email);
    const refusal = contactChangeRefusal(actor.role, before, { consent: c.consent, ...(c.timeZone !== null ? { timeZone: c.timeZone } : {}) });
    if (refusal) throw new ContactChangeForbiddenError(refusal);
    const id = await contactsUpsertConsent(tx, c);
    if (!id) throw new HoldfastError("contact_not_found", "the contact could not be saved: try again");
    // A new contact was inserted with its zone; an existing one moves there with its waits.
    const zone = before && c.timeZone !== null ? await changeContactZone(tx, c.orgId, id, c.timeZone, actor.by) : null;
    return { id, zone };
  });
}

/** `setContactZone` (timers/contact-zone.ts) as `actor` may: refused, it changes nothing. */
export async function setContactZoneAs(db: Db, actor: ContactActor, orgId: string, contactId: string, zone: string | null): Promise<ZoneChange> {
  if (zone !== null && !isValidZone(zone)) throw new InvalidZoneError(zone);
  return inTx(db, async (tx) => {
    const before = await contactsLockById(tx, orgId, contactId);
    if (!before) throw new HoldfastError("contact_not_found", "contact not found: it may have been erased; search again");
    const refusal = contactChangeRefusal(actor.role, before, { timeZone: zone });
    if (refusal) throw new ContactChangeForbiddenError(refusal);
    const change = await changeContactZone(tx, orgId, contactId, zone, actor.by);
    if (!change) throw new HoldfastError("contact_not_found", "contact not found: it may have been erased; search again");
    return change;
  });
}
