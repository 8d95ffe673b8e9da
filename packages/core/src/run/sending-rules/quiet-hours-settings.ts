import type { Db } from "@holdfast/db";
import { NotFoundError } from "../../base/errors";
import { daysWords, type QuietOverride, quietHoursSentence, type QuietWindow, quietWindowInForce } from "../../people/sending-rules/quiet-hours";
import { automationsQuietHours, automationsSetQuietHours, sendingRulesQuietHours, sendingRulesSetQuietHours } from "../../store/sql/sending-rules";

/**
 * Quiet hours as Settings and an automation's page show and change them (issue 44). Inputs are parsed by the caller
 * (the tRPC procedure's zod schema: people/sending-rules/quiet-hours.ts); roles are checked there too (owners change).
 */

export interface OrgQuietHoursView {
  window: QuietWindow | null;
  sentence: string;
  /** Who last changed it and when; null when nobody has. */
  updatedBy: string | null;
  updatedAt: Date | null;
}

export async function orgQuietHours(db: Db, orgId: string): Promise<OrgQuietHoursView> {
  const row = await sendingRulesQuietHours(db, orgId);
  const { window } = quietWindowInForce(null, row.quietHours);
  return { window, sentence: quietHoursSentence(window), updatedBy: row.updatedBy, updatedAt: row.updatedAt };
}

/** Sets (null: turns off) the organisation's quiet hours; a repeated save of the same window changes nothing. */
export async function setOrgQuietHours(db: Db, orgId: string, window: QuietWindow | null, by: string): Promise<{ changed: boolean; message: string }> {
  const changed = await sendingRulesSetQuietHours(db, orgId, window, by);
  const now = window ? `Quiet hours saved. ${quietHoursSentence(window)}` : "Quiet hours turned off: emails go out at any hour.";
  return { changed, message: changed ? `${now} Sends already held keep their time; new sends follow this.` : `Nothing changed. ${quietHoursSentence(window)}` };
}

export interface AutomationQuietHoursView {
  /** null: the organisation's; {off: true}: none; else its own window. */
  override: QuietOverride;
  /** The organisation's window, for "Use the organisation's quiet hours (…)". */
  organisation: QuietWindow | null;
  /** The organisation's hours in short: "Mon-Fri 08:00-20:00", or "none set". */
  organisationWords: string;
  /** What applies to this automation's sends, in words. */
  sentence: string;
}

export async function automationQuietHours(db: Db, orgId: string, automationId: string): Promise<AutomationQuietHoursView> {
  const [own, org] = await Promise.all([automationsQuietHours(db, orgId, automationId), sendingRulesQuietHours(db, orgId)]);
  if (!own) throw new NotFoundError("automation_not_found", "automation");
  const organisation = quietWindowInForce(null, org.quietHours).window;
  const inForce = quietWindowInForce(own.quietHours, org.quietHours);
  const override = own.quietHours === null ? null : inForce.source === "automation" ? inForce.window : { off: true as const };
  const organisationWords = organisation ? `${daysWords(organisation.days)} ${organisation.start}-${organisation.end}` : "none set";
  return { override, organisation, organisationWords, sentence: quietHoursSentence(inForce.window) };
}

export async function setAutomationQuietHours(db: Db, orgId: string, automationId: string, override: QuietOverride): Promise<{ message: string }> {
  if (!(await automationsSetQuietHours(db, orgId, automationId, override))) throw new NotFoundError("automation_not_found", "automation");
  const view = await automationQuietHours(db, orgId, automationId);
  const which = override === null ? "the organisation's quiet hours" : "off" in override ? "no quiet hours" : "its own quiet hours";
  return { message: `Saved: this automation uses ${which}. ${view.sentence}` };
}
