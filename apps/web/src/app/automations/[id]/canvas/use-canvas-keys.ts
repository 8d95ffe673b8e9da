"use client";

import { useEffect, useRef } from "react";

/** What the canvas's keys do (see useCanvasKeys). */
export interface CanvasKeyActions {
  /** False while the counts view is shown: the keys then leave the draft alone. */
  active: boolean;
  undo: () => void;
  redo: () => void;
  copy: () => void;
  paste: () => void;
  duplicate: () => void;
  find: () => void;
  /** An arrow key on the canvas: move the selection to a connected step. */
  walk: (key: string) => void;
  /** Enter on a step: select it and open its drawer. */
  open: (id: string) => void;
  /** A (or +) on the canvas: add a step after the selected one. */
  addAfter: () => void;
}

const typing = (el: EventTarget | null) => el instanceof HTMLElement && !!el.closest("input, textarea, select, [contenteditable=true]");
const onCanvas = (el: EventTarget | null) => el instanceof HTMLElement && !!el.closest(".canvas");
const inDialog = (el: EventTarget | null) => el instanceof HTMLElement && !!el.closest("[role=dialog]");

/**
 * The editor's keyboard: Ctrl+Z / Ctrl+Shift+Z (or Ctrl+Y) undo and redo, Ctrl+C / Ctrl+V / Ctrl+D copy, paste and
 * duplicate the selected steps, Ctrl+K finds a step; on the canvas, arrows walk between connected steps, Enter opens
 * the step's drawer and A adds a step after it. Delete is the canvas's own (React Flow's deleteKeyCode). Listened on
 * the window in the capture phase, so a plain arrow walks instead of nudging the step by a few pixels (Shift+arrow
 * still moves the selected steps).
 */
export function useCanvasKeys(actions: CanvasKeyActions) {
  const ref = useRef(actions);
  ref.current = actions;
  useEffect(() => {
    const key = (e: KeyboardEvent) => {
      const a = ref.current;
      if (!a.active) return;
      const k = e.key.toLowerCase();
      if ((e.ctrlKey || e.metaKey) && !e.altKey) {
        if (k === "k") {
          e.preventDefault();
          a.find();
          return;
        }
        if (typing(e.target) || inDialog(e.target)) return;
        const act = { z: e.shiftKey ? a.redo : a.undo, y: a.redo, c: a.copy, v: a.paste, d: a.duplicate }[k];
        // Ctrl+C with text selected on the page copies the text, as everywhere.
        if (!act || (k === "c" && String(window.getSelection() ?? "") !== "")) return;
        e.preventDefault();
        act();
        return;
      }
      if (e.altKey || e.ctrlKey || e.metaKey || !onCanvas(e.target) || typing(e.target) || inDialog(e.target)) return;
      if (e.key.startsWith("Arrow") && !e.shiftKey) {
        e.preventDefault();
        e.stopPropagation();
        a.walk(e.key);
      } else if (e.key === "Enter") {
        const id = (e.target as HTMLElement).closest(".react-flow__node")?.getAttribute("data-id");
        if (!id) return;
        e.preventDefault();
        e.stopPropagation();
        a.open(id);
      } else if (k === "a" || e.key === "+") {
        e.preventDefault();
        a.addAfter();
      }
    };
    window.addEventListener("keydown", key, true);
    return () => window.removeEventListener("keydown", key, true);
  }, []);
}
