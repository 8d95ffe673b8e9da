import { type Db, inTx } from "@holdfast/db";
import { HoldfastError } from "../../base/errors";
import { attributeLimits, reservedContactKeys } from "../../versions/kinds/declared-fields";
import { type Consent, contactsLockByEmail, contactsLockById, contactsSetAttributes, contactsUpsertConsent } from "../../store/sql/contacts";
import type { Role } from "../../store/sql/memberships";
import { changeContactZone, InvalidZoneError, type ZoneChange } from "../timers/contact-zone";
import { isValidZone } from "../../decide/timers/schedule";
import { ContactChangeForbiddenError, contactChangeRefusal } from "./rules";

/** A member changing contacts: their role in the organisation now, and who they are for the runs' timelines. */
export interface ContactActor {
  role: Role;
  by: string;
}

/**
 * Adds a contact with its zone and consent, or sets an existing one's consent and (when `timeZone` is not null) its
 * zone, moving its pending waits; as `actor` may (run/contacts/rules.ts), judged on the contact's row locked in the same
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

/** `setContactZone` (run/timers/contact-zone.ts) as `actor` may: refused, it changes nothing. */
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

/** A key a person may give a contact's attribute: `name`, `company`, or a kept field's (`job_title`). */
export const attributeKeyPattern = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Replaces a contact's name, company and kept fields as `actor` may (editors and owners: run/contacts/rules.ts), in one
 * transaction on the contact's locked row; an empty value removes the attribute. A later delivery that sends a value
 * sets it again (the latest values win). An erased contact has none to edit.
 */
export async function setContactAttributesAs(
  db: Db,
  actor: ContactActor,
  orgId: string,
  contactId: string,
  attributes: Record<string, string>,
): Promise<{ changed: boolean; attributes: Record<string, string> }> {
  const kept: Record<string, string> = {};
  for (const [key, raw] of Object.entries(attributes)) {
    const value = raw.trim();
    if (!attributeKeyPattern.test(key)) throw new HoldfastError("invalid_attribute", `"${key}" cannot name a contact's field: use letters, digits, _ and -`);
    if (reservedContactKeys.has(key) && key !== "name" && key !== "company") throw new HoldfastError("invalid_attribute", `"${key}" is the contact's own: it is not changed here`);
    if (value.length > attributeLimits.valueChars) throw new HoldfastError("invalid_attribute", `${key} is longer than ${attributeLimits.valueChars} characters`);
    if (value !== "") kept[key] = value;
  }
  if (Object.keys(kept).length > attributeLimits.keys) throw new HoldfastError("invalid_attribute", `a contact keeps at most ${attributeLimits.keys} fields`);
  return inTx(db, async (tx) => {
    const before = await contactsLockById(tx, orgId, contactId);
    if (!before) throw new HoldfastError("contact_not_found", "contact not found: it may have been erased; search again");
    const refusal = contactChangeRefusal(actor.role, before, {});
    if (refusal) throw new ContactChangeForbiddenError(refusal);
    const set = await contactsSetAttributes(tx, orgId, contactId, kept);
    if (!set) throw new HoldfastError("contact_not_found", "this contact was erased: it keeps no name or company");
    return { changed: set.changed, attributes: kept };
  });
}
