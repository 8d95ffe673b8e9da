/** The cookie holding the viewer's IANA time zone (their browser's), written by app/viewer-zone.tsx. */
export const viewerZoneCookie = "hf_tz";
