import { DateTime } from "luxon";
import { isValidZone } from "../../versions/kinds/wait-rule";
import type { StoryClock, StoryEvent } from "./story-types";
import { date, rec, str } from "./values";

/**
 * A send held by a sending rule (issue 44), in words, from the `hold` on the step's latest step.deferred row (any
 * rule: quiet hours, the frequency cap), so every hold reads the same way with its own words:
 * "until Mon 7 Dec 08:00 in the contact's zone (Europe/Paris): quiet hours: sends go out Mon-Fri 08:00-20:00".
 * An instant in the contact's zone reads the same for every viewer (the viewer's own time is beside a wait, not here:
 * the rule is about the contact's day).
 */
export interface HoldWords {
  until: Date;
  /** "until Mon 7 Dec 08:00 in the contact's zone (Europe/Paris): quiet hours: ...". */
  text: string;
}

/** The step's latest hold, in words; null when its latest deferral held nothing (a busy connection) or it has none. */
export function latestHold(events: StoryEvent[], clock: StoryClock): HoldWords | null {
  const last = events.filter((e) => e.type === "step.deferred").at(-1);
  const hold = rec(last?.data?.hold);
  const until = date(hold.until);
  if (!until) return null;
  const zone = str(hold.zone);
  const source = str(hold.zoneSource);
  const local = (z: string) => DateTime.fromJSDate(until, { zone: z }).setLocale("en-GB").toFormat("ccc d LLL HH:mm");
  const when =
    zone && isValidZone(zone)
      ? source?.startsWith("the contact's")
        ? `${local(zone)} in the contact's zone (${zone})`
        : `${local(zone)} ${zone}${source ? ` (${source})` : ""}`
      : clock.when(until);
  return { until, text: `until ${when}: ${str(hold.words) ?? "a sending rule"}` };
}
