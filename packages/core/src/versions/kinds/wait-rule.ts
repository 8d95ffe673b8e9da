import { IANAZone } from "luxon";
import { z } from "zod";

/** A wait's rule and the zone check: pure and browser-safe (the schedule itself is decide/timers/schedule.ts; the wait kind owns its rule). */

const hhmm = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, "a local time as HH:MM");
const weekday = z.number().int().min(1).max(7); // ISO: 1 = Monday ... 7 = Sunday

export const waitRuleSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("duration"), seconds: z.number().int().min(0).max(366 * 24 * 3600) }).strict(),
  z.object({ kind: z.literal("next_weekday"), at: hhmm }).strict(),
  z.object({ kind: z.literal("next_weekdays"), days: z.array(weekday).min(1).max(7), at: hhmm }).strict(),
  z
    .object({
      kind: z.literal("local_datetime"),
      at: z
        .string()
        .regex(/^\d{4}-\d{2}-\d{2}T([01]\d|2[0-3]):[0-5]\d$/, "YYYY-MM-DDTHH:MM")
        .refine((at) => {
          const [y, m, d] = at.slice(0, 10).split("-").map(Number) as [number, number, number];
          const date = new Date(Date.UTC(y, m - 1, d));
          return date.getUTCFullYear() === y && date.getUTCMonth() === m - 1 && date.getUTCDate() === d;
        }, "not a calendar date"),
    })
    .strict(),
]);
export type WaitRule = z.infer<typeof waitRuleSchema>;

export function isValidZone(zone: string): boolean {
  return IANAZone.isValidZone(zone);
}
