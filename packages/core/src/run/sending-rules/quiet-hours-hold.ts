import type { Db } from "@holdfast/db";
import type { SendHold, StepOutcome } from "../../base/outcome/outcome";
import { isValidZone } from "../../decide/timers/schedule";
import { isOpen, nextOpening, quietHoursWords, quietWindowInForce } from "../../people/sending-rules/quiet-hours";
import { sendingRulesQuietHoursOfRun } from "../../store/sql/sending-rules";

/**
 * Quiet hours at the moment of sending (run/connectors/send-email.ts, after consent, before the effect begins): the
 * rule in force is the automation's override, else the organisation's; the zone is the contact's stored one, else
 * the window's zone for contacts without one, else UTC; now is the database's (a test run's: its virtual clock). Outside the window the step is deferred, no attempt
 * used, to the next opening with this run's spread; the hold goes on its step.deferred row for the run page.
 * null: the send may go now.
 */
export async function quietHoursHold(db: Db, step: { orgId: string; runId: string }): Promise<Extract<StepOutcome, { kind: "defer" }> | null> {
  const facts = await sendingRulesQuietHoursOfRun(db, step.orgId, step.runId);
  if (!facts) return null;
  const { window } = quietWindowInForce(facts.automation, facts.organisation);
  if (!window) return null;
  const known = facts.contactZone !== null && isValidZone(facts.contactZone);
  const zone = known ? (facts.contactZone as string) : (window.zone ?? "UTC");
  if (isOpen(window, zone, facts.now)) return null;
  const next = nextOpening(window, zone, facts.now, step.runId);
  const words = quietHoursWords(window);
  const hold: SendHold = {
    rule: "quiet_hours",
    until: next.at.toISOString(),
    zone,
    zoneSource: known ? "the contact's stored time zone" : window.zone ? "the quiet hours' zone for contacts without one" : "no time zone is known for the contact",
    words,
  };
  return { kind: "defer", reason: `${words}; held until ${hold.until} (${zone})`, delayMs: Math.max(0, next.at.getTime() - facts.now.getTime()), hold };
}
