"use client";

import { useEffect } from "react";

/**
 * Marks the page as hydrated (`<html data-hydrated>`). Until then, buttons that only act through their React handler
 * (type="button") take no pointer events (globals.css): a click before the page can act on it does nothing either way,
 * and this way the button says so (it is not the click's target), so scripted clicks (the browser tests) wait for the
 * page instead of being lost. Links, selects and forms that work without JavaScript (GET filters, server actions) are
 * left alone; forms handled in the browser have SubmitButton.
 */
export function HydrationMark() {
  useEffect(() => {
    document.documentElement.dataset.hydrated = "";
  }, []);
  return null;
}
