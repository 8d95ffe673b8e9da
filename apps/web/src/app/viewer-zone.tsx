"use client";

import { useRouter } from "next/navigation";
import { useEffect } from "react";
import { viewerZoneCookie } from "../server/viewer-zone-name";

/**
 * Tells the server the browser's time zone: the run page formats its sentences on the server (server components,
 * no client formatting), so the zone travels as a cookie. On the first visit (no cookie, or the browser moved to
 * another zone) it writes the cookie and re-renders once; the page meanwhile reads in UTC, labelled as such.
 */
export function ViewerZone({ current }: { current: string | null }) {
  const router = useRouter();
  useEffect(() => {
    const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    if (!zone || zone === current) return;
    // biome-ignore lint/suspicious/noDocumentCookie: the Cookie Store API is not in every browser the app supports
    document.cookie = `${viewerZoneCookie}=${encodeURIComponent(zone)}; path=/; max-age=31536000; samesite=lax`;
    router.refresh();
  }, [current, router]);
  return null;
}
