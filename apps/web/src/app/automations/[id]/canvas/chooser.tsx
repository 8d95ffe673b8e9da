"use client";

import { type KeyboardEvent, useEffect, useRef } from "react";

export interface Choice {
  key: string;
  label: string;
  icon?: string;
  hint?: string;
}

/**
 * A small dialog over the canvas that asks one question with a few buttons: which kind of step to put in, or which
 * output a new step follows. Keyboard first: the first choice has focus, arrows move, Enter picks, Escape cancels.
 */
export function Chooser({ title, choices, onPick, onCancel, name }: { title: string; choices: Choice[]; onPick: (key: string) => void; onCancel: () => void; name: string }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    box.current?.querySelector<HTMLButtonElement>("button[data-choice]")?.focus();
  }, []);
  const onKeyDown = (e: KeyboardEvent) => {
    if (e.key === "Escape") {
      e.preventDefault();
      e.stopPropagation();
      onCancel();
      return;
    }
    if (e.key !== "ArrowDown" && e.key !== "ArrowUp") return;
    e.preventDefault();
    const buttons = [...(box.current?.querySelectorAll<HTMLButtonElement>("button[data-choice]") ?? [])];
    const at = buttons.indexOf(document.activeElement as HTMLButtonElement);
    buttons[(at + (e.key === "ArrowDown" ? 1 : buttons.length - 1)) % buttons.length]?.focus();
  };
  return (
    <div className="chooser" role="dialog" aria-label={title} data-chooser={name} ref={box} onKeyDown={onKeyDown}>
      <div className="chooser-title">{title}</div>
      <div className="chooser-choices">
        {choices.map((c) => (
          <button type="button" key={c.key} data-choice={c.key} title={c.hint} onClick={() => onPick(c.key)}>
            {c.icon ? <span aria-hidden>{c.icon} </span> : null}
            {c.label}
          </button>
        ))}
      </div>
      <button type="button" className="linklike small" onClick={onCancel}>
        Cancel
      </button>
    </div>
  );
}
