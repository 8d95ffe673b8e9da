import { DateTime } from "luxon";
import { z } from "zod";
import { instantsOf, isValidZone, spreadOffsetSeconds } from "../../decide/timers/schedule";

/**
 * Quiet hours (issue 44): the days and hours when sends may go out, in the contact's zone. Pure: the zone and the
 * present come in (the database's now(), or a test run's virtual clock); nothing here reads a clock.
 *
 * A send due outside the window waits for the next opening: the next instant the local time reaches `start` on an
 * allowed day, resolved with the waits' policy for local times that do not exist or exist twice
 * (decide/timers/schedule.ts instantsOf: a start in the spring gap moves forward by the gap, a start in the autumn
 * overlap takes the first occurrence). Held sends are spread over the first `spreadMinutes` of the window by a hash of
 * the run id (as the timers spread), never past the window's end, so a crowd held overnight does not leave at once.
 */

const hhmm = /^([01]\d|2[0-3]):[0-5]\d$/;
const weekdayNames = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"] as const;

export const quietWindowSchema = z
  .object({
    days: z
      .array(z.number().int().min(1, "days are ISO weekdays: 1 (Monday) to 7 (Sunday)").max(7, "days are ISO weekdays: 1 (Monday) to 7 (Sunday)"))
      .min(1, "choose at least one day when sends may go out")
      .refine((d) => new Set(d).size === d.length, "each day once"),
    start: z.string().regex(hhmm, 'the window opens at a time such as "08:00" (HH:MM, 24-hour clock)'),
    end: z.string().regex(/^(([01]\d|2[0-3]):[0-5]\d|24:00)$/, 'the window closes at a time such as "20:00" (HH:MM, 24-hour clock; 24:00 for midnight)'),
    spreadMinutes: z.number().int("a whole number of minutes").min(0, "0 or more minutes").max(720, "at most 720 minutes (12 hours)"),
    /** The zone for contacts with none stored (absent: UTC): a US list is not woken at 03:00 because its zones are unknown. */
    zone: z.string().max(100).refine(isValidZone, 'the time zone for contacts without one must be a time zone such as "America/New_York"').optional(),
  })
  .strict()
  .refine((w) => w.start < w.end, {
    path: ["end"],
    message: "the window must open before it closes on the same day (such as 08:00 to 20:00); a window past midnight is not supported",
  });
export type QuietWindow = z.infer<typeof quietWindowSchema>;

/** An automation's quiet hours: null, the organisation's; {off: true}, none for this automation; else its own window. */
export const quietOverrideSchema = z.union([z.null(), z.object({ off: z.literal(true) }).strict(), quietWindowSchema]);
export type QuietOverride = z.infer<typeof quietOverrideSchema>;

/**
 * The window in force for a send: the automation's own, none when it turned them off, else the organisation's. A
 * stored value that no longer parses counts as none (never blocks every send); `problem` says so.
 */
export function quietWindowInForce(automation: unknown, organisation: unknown): { window: QuietWindow | null; source: "automation" | "organisation" | "none"; problem?: string } {
  if (automation !== null && automation !== undefined) {
    const own = quietOverrideSchema.safeParse(automation);
    if (!own.success) return { window: null, source: "none", problem: `the automation's quiet hours are not valid: ${own.error.issues[0]?.message}` };
    if (own.data === null || "off" in own.data) return { window: null, source: "none" };
    return { window: own.data, source: "automation" };
  }
  if (organisation === null || organisation === undefined) return { window: null, source: "none" };
  const org = quietWindowSchema.safeParse(organisation);
  if (!org.success) return { window: null, source: "none", problem: `the organisation's quiet hours are not valid: ${org.error.issues[0]?.message}` };
  return { window: org.data, source: "organisation" };
}

const minutesOf = (t: string) => {
  const [h, m] = t.split(":").map(Number) as [number, number];
  return h * 60 + m;
};

/** Sends may go out now: `now`'s local weekday is allowed and its local time is in [start, end). */
export function isOpen(window: QuietWindow, zone: string, now: Date): boolean {
  const local = DateTime.fromJSDate(now, { zone: isValidZone(zone) ? zone : "UTC" });
  const minute = local.hour * 60 + local.minute;
  return window.days.includes(local.weekday) && minute >= minutesOf(window.start) && minute < minutesOf(window.end);
}

export interface Opening {
  /** The instant local time reaches `start` on an allowed day (gap/overlap policy applied). */
  opening: Date;
  /** When this run's send goes: the opening plus its spread. */
  at: Date;
  spreadOffsetSeconds: number;
}

/** A local wall time on a calendar date: the instants it happens at (one, two in the overlap, gap-moved in the gap). */
function wallInstants(date: DateTime, time: string, zone: string): Date[] {
  if (time === "24:00") return wallInstants(date.plus({ days: 1 }), "00:00", zone);
  const [hour, minute] = time.split(":").map(Number) as [number, number];
  return instantsOf({ year: date.year, month: date.month, day: date.day, hour, minute }, zone);
}

/**
 * The next opening strictly after `now`, and this run's instant in it: opening + hash(runId) mod the spread, the
 * spread clamped to the window's length that day, so the send lands inside the window.
 */
export function nextOpening(window: QuietWindow, zone: string, now: Date, runId: string): Opening {
  const z = isValidZone(zone) ? zone : "UTC";
  const local = DateTime.fromJSDate(now, { zone: z });
  // Calendar dates without instants (no DST in a date).
  const today = DateTime.utc(local.year, local.month, local.day);
  for (let i = 0; i <= 8; i++) {
    const date = today.plus({ days: i });
    if (!window.days.includes(date.weekday)) continue;
    const opening = wallInstants(date, window.start, z).find((d) => d.getTime() > now.getTime());
    if (!opening) continue;
    const closing = wallInstants(date, window.end, z)[0] as Date;
    const length = Math.max(1, Math.floor((closing.getTime() - opening.getTime()) / 1000));
    const offset = spreadOffsetSeconds(runId, Math.min(window.spreadMinutes * 60, length));
    return { opening, at: new Date(opening.getTime() + offset * 1000), spreadOffsetSeconds: offset };
  }
  throw new Error(`no opening on days ${window.days.join(",")} within 8 days`); // unreachable: days is non-empty
}

/** "Mon-Fri", "Mon, Wed, Fri", "Mon-Wed, Sat", "every day". */
export function daysWords(days: number[]): string {
  const sorted = [...new Set(days)].sort((a, b) => a - b);
  if (sorted.length === 7) return "every day";
  const runs: number[][] = [];
  for (const d of sorted) {
    const last = runs.at(-1);
    if (last && d === (last.at(-1) as number) + 1) last.push(d);
    else runs.push([d]);
  }
  const name = (d: number) => weekdayNames[d - 1] as string;
  return runs.map((r) => (r.length >= 3 ? `${name(r[0] as number)}-${name(r.at(-1) as number)}` : r.map(name).join(", "))).join(", ");
}

/** The hold's reason in words, without the instant: "quiet hours: sends go out Mon-Fri 08:00-20:00". */
export function quietHoursWords(window: QuietWindow): string {
  const spread = window.spreadMinutes > 0 ? `, held sends spread over the first ${window.spreadMinutes} minutes` : "";
  return `quiet hours: sends go out ${daysWords(window.days)} ${window.start}-${window.end}${spread}`;
}

/** The setting as a sentence for Settings and the automation's page (its preview as the form is filled in). */
export function quietHoursSentence(window: QuietWindow | null): string {
  if (!window) return "No quiet hours: emails go out whenever a run reaches its send step.";
  const spread = window.spreadMinutes > 0 ? `, spread over the window's first ${window.spreadMinutes} minutes so they do not all leave at once` : "";
  return (
    `Emails go out ${daysWords(window.days)} from ${window.start} to ${window.end} in each contact's time zone (${window.zone ?? "UTC"} when the contact has none). ` +
    `An email due outside those hours waits for the next opening${spread}.`
  );
}
