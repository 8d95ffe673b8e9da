"use client";

import { palette, paletteGroups } from "./kinds";

/** Every registered kind, grouped, with its icon; click to add after the selected step, or drag onto the canvas. */
export function Palette({ canEdit, onAdd }: { canEdit: boolean; onAdd: (kind: string) => void }) {
  return (
    <>
      <div className="small muted">Click to add after the selected step, or drag onto the canvas</div>
      {paletteGroups.map((group) => (
        <div key={group} className="palette-group">
          <div className="palette-group-name small muted">{group}</div>
          {palette()
            .filter((k) => k.group === group)
            .map((k) => (
              <button
                type="button"
                key={k.kind}
                className="palette-item"
                data-kind={k.kind}
                title={k.description}
                draggable={canEdit}
                disabled={!canEdit}
                onDragStart={(e) => e.dataTransfer.setData("application/holdfast-kind", k.kind)}
                onClick={() => onAdd(k.kind)}
              >
                <span aria-hidden>{k.icon}</span> {k.label}
              </button>
            ))}
        </div>
      ))}
    </>
  );
}
