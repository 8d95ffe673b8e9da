import { isValidZone } from "@holdfast/core/versions";
import { type StoryClock, storyClock } from "@holdfast/core/story";
import { cookies } from "next/headers";
import { viewerZoneCookie } from "./viewer-zone-name";

/**
 * The viewer's zone from the cookie the browser set (app/viewer-zone.tsx): null until it has, or when it names no
 * IANA zone (a cookie is input like any other); pages then read in UTC and say so.
 */
export async function viewerZone(): Promise<string | null> {
  const raw = (await cookies()).get(viewerZoneCookie)?.value;
  if (!raw) return null;
  let zone: string;
  try {
    zone = decodeURIComponent(raw);
  } catch {
    return null;
  }
  return zone.length <= 64 && isValidZone(zone) ? zone : null;
}

/** The viewer's zone and a clock formatting instants in it (UTC, labelled, until the browser has told its zone). */
export async function viewerClock(): Promise<{ zone: string | null; clock: StoryClock }> {
  const zone = await viewerZone();
  return { zone, clock: storyClock(zone ?? "UTC", null) };
}
