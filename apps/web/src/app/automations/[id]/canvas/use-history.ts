"use client";

import { useRef } from "react";

/**
 * Undo and redo over the graph as saved text: an entry per settled change (the autosave's 0.8 s), 200 at most.
 * `restore` puts a graph back on the canvas.
 */
export function useHistory(graphText: string, restore: (text: string) => void) {
  const history = useRef<{ past: string[]; future: string[] }>({ past: [], future: [] });
  const record = (text: string) => {
    const h = history.current;
    if (h.past.at(-1) === text) return;
    h.past.push(text);
    if (h.past.length > 200) h.past.shift();
    h.future = [];
  };
  const reset = (text: string) => {
    history.current = { past: [text], future: [] };
  };
  const undo = () => {
    const h = history.current;
    if (graphText !== h.past.at(-1)) h.past.push(graphText);
    if (h.past.length < 2) return;
    h.future.push(h.past.pop() as string);
    restore(h.past.at(-1) as string);
  };
  const redo = () => {
    const h = history.current;
    const next = h.future.pop();
    if (!next) return;
    h.past.push(next);
    restore(next);
  };
  return { undo, redo, record, reset };
}
