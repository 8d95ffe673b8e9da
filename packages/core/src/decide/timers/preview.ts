import { DateTime } from "luxon";
import type { WaitRule } from "../../versions/kinds/wait-rule";
import { dueInstant } from "./schedule";

export interface PreviewInstant {
  /** ISO instant (UTC). */
  at: string;
  /** "Wed 2 Dec 2026, 09:00 (UTC+1)" in the zone. */
  local: string;
  /** Set when the zone's clocks change between the previous instant (or now) and this one. */
  clockChange?: string;
}

/**
 * The next `count` instants a wait rule would be due, from `now`, in `zone`: what the editor shows under the rule.
 * A clock change (daylight saving) between two of them is said beside the later one.
 */
export function previewWait(rule: WaitRule, zone: string, now: Date, count = 3): PreviewInstant[] {
  const out: PreviewInstant[] = [];
  let from = now;
  for (let i = 0; i < (rule.kind === "duration" || rule.kind === "local_datetime" ? 1 : count); i++) {
    const due = dueInstant(rule, zone, from);
    const before = DateTime.fromJSDate(from, { zone });
    const at = DateTime.fromJSDate(due, { zone });
    const item: PreviewInstant = { at: due.toISOString(), local: `${at.toFormat("ccc d LLL yyyy, HH:mm")} (${at.toFormat("ZZZZ")}, UTC${at.toFormat("ZZ")})` };
    if (before.offset !== at.offset) {
      item.clockChange = `the clocks in ${zone} change before this (UTC${before.toFormat("ZZ")} to UTC${at.toFormat("ZZ")})`;
    }
    out.push(item);
    from = new Date(due.getTime() + 60_000);
  }
  return out;
}
