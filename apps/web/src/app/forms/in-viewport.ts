"use client";

import { type RefObject, useLayoutEffect } from "react";

/**
 * A pop-up (the variable picker's menu) placed inside the window: under its button when there is room, else above
 * it, moved left so its right edge stays on screen. Fixed positioning, so a scrolling drawer or a canvas with
 * overflow hidden never cuts it off; it follows the button while anything scrolls.
 */
export function useInViewport(open: boolean, anchor: RefObject<HTMLElement | null>, popup: RefObject<HTMLElement | null>) {
  useLayoutEffect(() => {
    if (!open) return;
    const place = () => {
      const a = anchor.current?.getBoundingClientRect();
      const p = popup.current;
      if (!a || !p) return;
      const margin = 8;
      const width = Math.min(p.offsetWidth, window.innerWidth - 2 * margin);
      const below = window.innerHeight - a.bottom - margin;
      const above = a.top - margin;
      const up = below < 220 && above > below;
      const room = Math.max(120, Math.min(320, (up ? above : below) - 4));
      p.style.position = "fixed";
      p.style.maxHeight = `${room}px`;
      p.style.left = `${Math.max(margin, Math.min(a.left, window.innerWidth - width - margin))}px`;
      p.style.top = up ? `${Math.max(margin, a.top - 4 - Math.min(room, p.scrollHeight))}px` : `${a.bottom + 4}px`;
    };
    place();
    window.addEventListener("scroll", place, true);
    window.addEventListener("resize", place);
    return () => {
      window.removeEventListener("scroll", place, true);
      window.removeEventListener("resize", place);
    };
  }, [open, anchor, popup]);
}
