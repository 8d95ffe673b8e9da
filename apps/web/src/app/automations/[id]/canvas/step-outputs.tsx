"use client";

import type { Edge } from "@xyflow/react";
import type { Dispatch, SetStateAction } from "react";
import { kindInfo } from "../../kinds";
import { setOutput } from "./graph-edit";
import { type FlowNode, outputsOf, outputWords } from "./graph-model";

/** The drawer's "Then": for each output of the step, the step it leads to (or none). */
export function StepOutputs({ current, nodes, edges, canEdit, setEdges }: { current: FlowNode; nodes: FlowNode[]; edges: Edge[]; canEdit: boolean; setEdges: Dispatch<SetStateAction<Edge[]>> }) {
  const outputs = outputsOf(current.data.kind, current.data.config);
  if (outputs.length === 0) return null;
  return (
    <fieldset className="outputs stack">
      <legend>Then</legend>
      {outputs.map((o) => {
        const target = edges.find((e) => e.source === current.id && (e.sourceHandle ?? null) === o)?.target ?? "";
        return (
          <label key={o ?? "next"} className="row-inline">
            <span className="output-name">{o ? outputWords(current.data.kind, o) : "Next step"}</span>
            <select name={`output-${o ?? "next"}`} value={target} disabled={!canEdit} onChange={(e) => setEdges((es) => setOutput(es, current.id, o, e.target.value))}>
              <option value="">{target ? "(disconnect)" : "Choose a step…"}</option>
              {nodes
                .filter((n) => n.id !== current.id && n.data.kind !== "trigger")
                .map((n) => (
                  <option key={n.id} value={n.id}>
                    {kindInfo(n.data.kind)?.icon} {n.data.name ?? n.id}
                  </option>
                ))}
            </select>
          </label>
        );
      })}
    </fieldset>
  );
}
