import { type AttributeValue, contactAttributesOf, contactPaths } from "../../versions/kinds/declared-fields";
import { isValidZone } from "../../versions/kinds/wait-rule";
import type { TriggerConfig } from "../../versions/graph";
import { readDotted } from "./start-key";

export interface PayloadContact {
  email: string;
  timeZone: string | null;
  /** Name, company and the trigger's kept fields, as this payload gives them (versions/kinds/declared-fields.ts). */
  attributes: Record<string, AttributeValue>;
}

/**
 * The contact a trigger payload names (an email address), if any: what a start finds or creates (and updates with
 * the payload's attributes), and what the editor's preview takes as the run's contact. Where the email and zone are
 * is the trigger's one rule (contactPaths: a declared role, else the path typed by hand). Pure.
 */
export function contactOf(trigger: Pick<TriggerConfig, "contactEmailField" | "contactTimeZoneField" | "fields">, body: unknown): PayloadContact | null {
  const paths = contactPaths(trigger);
  const email = readDotted(body, paths.email);
  if (typeof email !== "string" || !/^[^\s@]+@[^\s@]+$/.test(email.trim())) return null;
  const zone = paths.timeZone ? readDotted(body, paths.timeZone) : undefined;
  return {
    email: email.trim().toLowerCase(),
    timeZone: typeof zone === "string" && isValidZone(zone) ? zone : null,
    attributes: contactAttributesOf(trigger.fields, body),
  };
}
