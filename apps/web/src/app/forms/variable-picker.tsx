"use client";

import type { Variable } from "@holdfast/core/kinds";
import { useRef, useState } from "react";
import { useInViewport } from "./in-viewport";

/**
 * The variable picker: what exists at this node (the payload from the trigger's declared fields and samples, the contact, the run, the
 * outputs of steps that run on every path here), searchable; a click inserts `{{path}}` where the cursor was.
 */
export function VariablePicker({ variables, onPick, label = "Insert variable" }: { variables: Variable[]; onPick: (path: string) => void; label?: string }) {
  const [open, setOpen] = useState(false);
  const [query, setQuery] = useState("");
  const shown = variables.filter((v) => `${v.path} ${v.label}`.toLowerCase().includes(query.toLowerCase()));
  const groups = [...new Set(shown.map((v) => v.group))];
  const button = useRef<HTMLButtonElement>(null);
  const menu = useRef<HTMLDivElement>(null);
  useInViewport(open, button, menu);
  return (
    <span className="var-picker">
      <button type="button" ref={button} className="small var-picker-button" aria-expanded={open} onClick={() => setOpen(!open)}>
        {"{ }"} {label}
      </button>
      {open && (
        <div className="var-picker-menu" ref={menu}>
          <input
            className="var-picker-search"
            aria-label="Search variables"
            placeholder="Search variables"
            // biome-ignore lint/a11y/noAutofocus: the menu opened to be searched
            autoFocus
            value={query}
            onChange={(e) => setQuery(e.target.value)}
            onKeyDown={(e) => e.key === "Escape" && setOpen(false)}
          />
          {groups.length === 0 && <p className="small muted">Nothing matches. Declare the fields the form sends on the trigger (or send a delivery) to see the payload's fields.</p>}
          {groups.length > 0 && (
            <div role="listbox" aria-label="variables">
              {groups.map((g) => (
                // biome-ignore lint/a11y/useSemanticElements: a group of options inside a listbox, not a form's fieldset
                <div key={g} role="group" aria-label={g}>
                  <div className="var-group small muted" aria-hidden="true">
                    {g}
                  </div>
                  {shown
                    .filter((v) => v.group === g)
                    .map((v) => (
                      <button
                        type="button"
                        role="option"
                        aria-selected={false}
                        key={v.path}
                        className="var-option"
                        data-path={v.path}
                        onClick={() => {
                          onPick(v.path);
                          setOpen(false);
                          setQuery("");
                        }}
                      >
                        <span>{v.label}</span> <code className="small">{v.path}</code>
                        {v.example ? <span className="small muted"> e.g. {v.example}</span> : null}
                      </button>
                    ))}
                </div>
              ))}
            </div>
          )}
        </div>
      )}
    </span>
  );
}
