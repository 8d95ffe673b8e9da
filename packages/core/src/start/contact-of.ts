import { isValidZone } from "../kinds/wait-rule";
import type { TriggerConfig } from "../versions/graph";
import { readDotted } from "./start-key";

/**
 * The contact a trigger payload names (an email address), if any: what a start finds or creates, and what the
 * editor's preview takes as the run's contact. Pure.
 */
export function contactOf(trigger: Pick<TriggerConfig, "contactEmailField" | "contactTimeZoneField">, body: unknown): { email: string; timeZone: string | null } | null {
  const email = readDotted(body, trigger.contactEmailField);
  if (typeof email !== "string" || !/^[^\s@]+@[^\s@]+$/.test(email.trim())) return null;
  const zone = trigger.contactTimeZoneField ? readDotted(body, trigger.contactTimeZoneField) : undefined;
  return { email: email.trim().toLowerCase(), timeZone: typeof zone === "string" && isValidZone(zone) ? zone : null };
}
