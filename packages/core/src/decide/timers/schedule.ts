import { createHash } from "node:crypto";
import { DateTime, IANAZone } from "luxon";
import type { WaitRule } from "../../versions/kinds/wait-rule";

/**
 * When a wait ends: pure functions of (rule, zone, the present as the database gave it). No clock is read here.
 *
 * Policy for local times that do not exist or exist twice (docs/timers.md):
 * - a local time in the spring gap (02:30 on the day clocks jump 02:00 -> 03:00) moves forward by the length of the
 *   gap (03:30);
 * - a local time in the autumn overlap (02:30 on the day clocks fall back 03:00 -> 02:00) takes the first
 *   occurrence (the earlier instant, still on summer time).
 * Both are resolved here from the zone's offsets around the wall time, so the answer never depends on today's
 * date (luxon alone picks an offset for an ambiguous time that does).
 */

export { isValidZone, type WaitRule, waitRuleSchema } from "../../versions/kinds/wait-rule";

interface Wall {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
}

/** The UTC instant of a local wall time in `zone`, with the gap and overlap policy above. */
export function instantOf(wall: Wall, zone: string): Date {
  return instantsOf(wall, zone)[0] as Date;
}

/** Every instant a wall time happens (two in the autumn overlap), or its gap-moved instant; earliest first. */
export function instantsOf(wall: Wall, zone: string): Date[] {
  const asUtc = Date.UTC(wall.year, wall.month - 1, wall.day, wall.hour, wall.minute);
  const iana = IANAZone.create(zone);
  // The offsets in force a day either side bracket any transition near this wall time.
  const offsets = [...new Set([iana.offset(asUtc - 36 * 3600_000), iana.offset(asUtc), iana.offset(asUtc + 36 * 3600_000)])];
  const matches = offsets
    .map((o) => asUtc - o * 60_000)
    .filter((t) => iana.offset(t) * 60_000 === asUtc - t) // the wall time really happens at t
    .sort((a, b) => a - b);
  if (matches.length > 0) return matches.map((m) => new Date(m)); // an overlap has two: first occurrence first
  // Gap: the wall time never happens. Move forward by the gap: read it with the offset in force before the jump.
  return [new Date(asUtc - iana.offset(asUtc - 36 * 3600_000) * 60_000)];
}

function wallOf(instant: Date, zone: string): Wall & { weekday: number } {
  const d = DateTime.fromJSDate(instant, { zone });
  return { year: d.year, month: d.month, day: d.day, hour: d.hour, minute: d.minute, weekday: d.weekday };
}

/** Calendar arithmetic on local dates, without instants (no DST in a date). */
function addDays(w: Wall, days: number): Wall {
  const d = new Date(Date.UTC(w.year, w.month - 1, w.day + days));
  return { ...w, year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() };
}

function isoWeekday(w: Wall): number {
  const js = new Date(Date.UTC(w.year, w.month - 1, w.day)).getUTCDay(); // 0 = Sunday
  return js === 0 ? 7 : js;
}

/** The first instant strictly after `now` whose local date is one of `days` at `at` in `zone`. */
function nextOn(days: number[], at: string, zone: string, now: Date): Date {
  const [hour, minute] = at.split(":").map(Number) as [number, number];
  const today = wallOf(now, zone);
  for (let i = 0; i <= 8; i++) {
    const date = addDays(today, i);
    if (!days.includes(isoWeekday(date))) continue;
    // The first occurrence, unless it has passed while a second (autumn overlap) is still ahead today.
    const due = instantsOf({ ...date, hour, minute }, zone).find((d) => d.getTime() > now.getTime());
    if (due) return due;
  }
  throw new Error(`no ${days.join(",")} at ${at} within 8 days`); // unreachable with days non-empty
}

/** The instant a wait ends, before spread. `now` is the database's now(). */
export function dueInstant(rule: WaitRule, zone: string, now: Date): Date {
  switch (rule.kind) {
    case "duration":
      return new Date(now.getTime() + rule.seconds * 1000);
    case "next_weekday":
      return nextOn([1, 2, 3, 4, 5], rule.at, zone, now);
    case "next_weekdays":
      return nextOn(rule.days, rule.at, zone, now);
    case "local_datetime": {
      const [date, time] = rule.at.split("T") as [string, string];
      const [year, month, day] = date.split("-").map(Number) as [number, number, number];
      const [hour, minute] = time.split(":").map(Number) as [number, number];
      return instantOf({ year, month, day, hour, minute }, zone);
    }
  }
}

/**
 * Deterministic spread for timers from human schedules: hash(run id) mod spreadSeconds. The same run lands on the
 * same offset after any recompute, so a zone change never reshuffles who goes first.
 */
export function spreadOffsetSeconds(runId: string, spreadSeconds: number): number {
  if (spreadSeconds <= 0) return 0;
  const h = createHash("sha256").update(runId).digest();
  return h.readUInt32BE(0) % spreadSeconds;
}
