import { HoldfastError } from "../../base/errors";
import type { Consent } from "../../store/sql/contacts";
import type { Role } from "../../store/sql/memberships";

/**
 * Who may change a contact's consent and time zone: the one rule for every path a member takes (contacts.upsert,
 * the contact's own view). Owners may change both. Editors add contacts (with the consent and zone they were
 * given) and may record consent or withdraw it, but may not give back consent the person withdrew (to "granted" or to
 * "unknown", which also lets emails go out again): that says the person agreed again, a legal matter the owner
 * answers for. Nor may they move an existing contact to another zone (or clear it): that moves the times of the
 * contact's waiting runs, as only owners may. Operators (the CLI), unsubscribes and a delivery naming its contact's
 * zone are not members' changes and do not pass here.
 */
export interface ContactFacts {
  consent: Consent;
  timeZone: string | null;
}

/** What a change asks for; a field left undefined is left as it is. */
export interface ContactChange {
  consent?: Consent;
  timeZone?: string | null;
}

export const contactRefusals = {
  regrant: "This contact withdrew their consent: only an owner can record it as given again (it needs proof the person agreed again).",
  rezone: "Only an owner can change the time zone of an existing contact: it moves the times of their waiting runs.",
  role: "Changing contacts needs the editor or owner role.",
} as const;

/** Why `role` may not make `change` to a contact that is `before` (null: not there yet), or null when it may. */
export function contactChangeRefusal(role: Role, before: ContactFacts | null, change: ContactChange): string | null {
  if (role === "owner") return null;
  if (role !== "editor") return contactRefusals.role;
  if (before === null) return null;
  if (before.consent === "withdrawn" && change.consent !== undefined && change.consent !== "withdrawn") return contactRefusals.regrant;
  if (change.timeZone !== undefined && change.timeZone !== before.timeZone) return contactRefusals.rezone;
  return null;
}

export class ContactChangeForbiddenError extends HoldfastError {
  constructor(message: string) {
    super("contact_change_forbidden", message);
  }
}
