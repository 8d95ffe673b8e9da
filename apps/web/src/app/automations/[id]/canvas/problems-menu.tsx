"use client";

import { useState } from "react";
import { labelOf } from "../../../forms/step-form";
import { kindInfo } from "../../kinds";
import type { GraphJson, PlacedProblem } from "./graph-model";
import type { SaveState } from "./use-autosave";

/** The draft's problems: their count, and a list that goes to each problem (or to Settings to fix it). */
export function ProblemsMenu({ state, count, placed, graph, onProblem }: { state: SaveState; count: number; placed: PlacedProblem[]; graph: GraphJson; onProblem: (p: PlacedProblem) => void }) {
  const [showProblems, setShowProblems] = useState(false);
  return (
    <span className="problems-wrap">
      <button type="button" className={count ? "problems-count bad" : "problems-count ok"} aria-expanded={showProblems} disabled={count === 0} onClick={() => setShowProblems(!showProblems)}>
        {state === "dirty" || state === "saving" ? "Checking…" : count ? `${count} problem${count === 1 ? "" : "s"}` : "No problems"}
      </button>
      {showProblems && count > 0 && (
        <ul className="problems-list" aria-label="problems">
          {placed.map((p) => {
            const node = graph.nodes.find((n) => n.id === p.nodeId);
            const module = kindInfo(node?.kind ?? "");
            return (
              <li key={`${p.nodeId}:${p.field}:${p.message}`}>
                <button
                  type="button"
                  data-problem-node={p.nodeId}
                  data-problem-field={p.field}
                  onClick={() => {
                    setShowProblems(false);
                    onProblem(p);
                  }}
                >
                  <strong>
                    {module?.icon} {node?.name ?? p.nodeId}
                  </strong>
                  {p.field ? <span className="muted"> · {labelOf(module, p.field)}</span> : null}
                  <br />
                  {p.message}
                </button>
                {p.href ? (
                  <a className="small" href={p.href}>
                    Fix it in Settings
                  </a>
                ) : null}
              </li>
            );
          })}
        </ul>
      )}
    </span>
  );
}
