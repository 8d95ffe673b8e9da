"use client";

import { useEffect } from "react";

/**
 * Marks the page as hydrated (`<html data-hydrated>`). Until then, controls that only work through their React handler
 * (type="button", selects and search boxes that act on change) take no pointer events (globals.css), so a click made
 * before the page is ready is not silently dropped: it lands once the page can act on it. Links and server-action forms
 * work without JavaScript and are left alone; browser-handled forms have SubmitButton.
 */
export function HydrationMark() {
  useEffect(() => {
    document.documentElement.dataset.hydrated = "";
  }, []);
  return null;
}
