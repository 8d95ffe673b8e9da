"use client";

import { fieldId } from "../../../forms/step-form";

/** The drawer's first field that takes input, focused once the drawer has opened. */
export function focusDrawerSoon() {
  setTimeout(() => document.querySelector<HTMLElement>(".panel .step-drawer :is(input, select, textarea, button):not(:disabled)")?.focus(), 60);
}

/**
 * A problem's field in the drawer, opened, scrolled to and focused once the drawer shows the step: looked for from
 * 350 ms on, again every 100 ms for 3 s (a trigger's form shows once its panel has loaded).
 */
export function focusProblemFieldSoon(nodeId: string, path: string) {
  const field = path.split(".");
  const look = (triesLeft: number) => {
    // The longest field name the problem's path starts with (approvers.users.0 -> approvers).
    for (let i = field.length; i > 0; i--) {
      const el = document.getElementById(fieldId(nodeId, field.slice(0, i).join(".")));
      if (el) {
        el.closest("details")?.setAttribute("open", "");
        el.scrollIntoView({ block: "center" });
        (el.matches("input, select, textarea") ? el : (el.querySelector("input, select, textarea") as HTMLElement | null))?.focus();
        return;
      }
    }
    if (triesLeft > 0) setTimeout(() => look(triesLeft - 1), 100);
  };
  setTimeout(() => look(30), 350);
}
