import { DateTime } from "luxon";
import { isValidZone } from "../../versions/kinds/wait-rule";
import type { StoryClock } from "./story-types";

const day = "ccc d LLL";
const hm = "HH:mm";
const fmt = (at: Date, zone: string, format = `${day} ${hm}`) => `${DateTime.fromJSDate(at, { zone }).setLocale("en-GB").toFormat(format)} ${zone}`;
/** The other zone's reading: only the time when it is the same calendar day, else the day too. */
function beside(at: Date, main: string, other: string): string {
  const a = DateTime.fromJSDate(at, { zone: main });
  const b = DateTime.fromJSDate(at, { zone: other });
  return fmt(at, other, a.toISODate() === b.toISODate() ? hm : `${day} ${hm}`);
}
const sameClock = (at: Date, a: string, b: string) => a === b || DateTime.fromJSDate(at, { zone: a }).offset === DateTime.fromJSDate(at, { zone: b }).offset;

export function storyClock(viewerZone: string, contactZone: string | null): StoryClock {
  const viewer = isValidZone(viewerZone) ? viewerZone : "UTC";
  const contact = contactZone && isValidZone(contactZone) ? contactZone : null;
  return {
    viewer,
    contact,
    when: (at) => (contact && !sameClock(at, viewer, contact) ? `${fmt(at, viewer)} (contact's time ${beside(at, viewer, contact)})` : fmt(at, viewer)),
    whenIn: (at, zone) => {
      const z = isValidZone(zone) ? zone : "UTC";
      return sameClock(at, z, viewer) ? fmt(at, z) : `${fmt(at, z)} (your time ${beside(at, z, viewer)})`;
    },
  };
}
