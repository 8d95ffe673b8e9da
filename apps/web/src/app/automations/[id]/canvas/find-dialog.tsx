"use client";

import { useEffect, useRef, useState } from "react";
import { kindInfo } from "../../kinds";
import type { FlowNode } from "./graph-model";

/** Ctrl+K: find a step by its name, id or kind; Enter (or a click) selects the first match and centres it. */
export function FindDialog({ nodes, onPick, onClose }: { nodes: FlowNode[]; onPick: (id: string) => void; onClose: () => void }) {
  const [query, setQuery] = useState("");
  const [at, setAt] = useState(0);
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => input.current?.focus(), []);
  const q = query.trim().toLowerCase();
  // Best first: the id or name itself, then those starting with it, then any containing it.
  const rank = (n: FlowNode) => {
    const names = [n.id, (n.data.name ?? "").toLowerCase()];
    if (names.includes(q)) return 0;
    if (names.some((s) => s.startsWith(q))) return 1;
    return `${names.join(" ")} ${n.data.kind} ${kindInfo(n.data.kind)?.label ?? ""}`.toLowerCase().includes(q) ? 2 : 3;
  };
  const found = nodes
    .map((n) => ({ n, r: rank(n) }))
    .filter((x) => x.r < 3)
    .sort((a, b) => a.r - b.r)
    .map((x) => x.n);
  const shown = found.slice(0, 12);
  return (
    <div className="chooser find-dialog" role="dialog" aria-label="Find a step">
      <input
        ref={input}
        name="find-step"
        aria-describedby="find-results"
        aria-label="Find a step by name, id or kind"
        placeholder="Find a step by name, id or kind"
        value={query}
        onChange={(e) => {
          setQuery(e.target.value);
          setAt(0);
        }}
        onKeyDown={(e) => {
          if (e.key === "Escape") onClose();
          else if (e.key === "ArrowDown") setAt((a) => Math.min(a + 1, shown.length - 1));
          else if (e.key === "ArrowUp") setAt((a) => Math.max(a - 1, 0));
          else if (e.key === "Enter" && shown[at]) onPick(shown[at].id);
          else return;
          e.preventDefault();
        }}
      />
      <ul id="find-results" aria-label="steps found" className="find-results">
        {shown.map((n, i) => (
          <li key={n.id} className={i === at ? "active" : undefined} aria-current={i === at ? "true" : undefined} data-found={n.id}>
            <button type="button" tabIndex={-1} onClick={() => onPick(n.id)}>
              {kindInfo(n.data.kind)?.icon} {n.data.name ?? n.id} <span className="muted small">{n.id}</span>
            </button>
          </li>
        ))}
        {shown.length === 0 && <li className="muted small">No step matches “{query}”.</li>}
      </ul>
    </div>
  );
}
