"use client";

import { Palette } from "../../palette";

/** The palette at the canvas's left, folded away with its toggle. */
export function PaletteAside({ open, setOpen, canEdit, onAdd }: { open: boolean; setOpen: (open: boolean) => void; canEdit: boolean; onAdd: (kind: string) => void }) {
  return (
    <aside className="palette" aria-label="palette">
      <button type="button" className="palette-toggle" aria-expanded={open} title={open ? "Hide the palette" : "Show the palette"} onClick={() => setOpen(!open)}>
        {open ? "« Steps" : "»"}
      </button>
      {open && <Palette canEdit={canEdit} onAdd={onAdd} />}
    </aside>
  );
}
