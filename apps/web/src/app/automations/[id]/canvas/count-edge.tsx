"use client";

import { BaseEdge, type Edge, EdgeLabelRenderer, type EdgeProps, getSmoothStepPath } from "@xyflow/react";
import { count } from "./counts-model";

export type CountEdgeData = { n: number; label: string | null };
export type CountFlowEdge = Edge<CountEdgeData>;

/** An edge in the counts view: how many runs took it (with its output's name: "A · 104"), its width by its share. */
export function CountEdge({ id, source, target, sourceX, sourceY, targetX, targetY, sourcePosition, targetPosition, markerEnd, data }: EdgeProps<CountFlowEdge>) {
  const [path, labelX, labelY] = getSmoothStepPath({ sourceX, sourceY, targetX, targetY, sourcePosition, targetPosition, borderRadius: 10, offset: 18 });
  const n = data?.n ?? 0;
  return (
    <>
      <BaseEdge id={id} path={path} markerEnd={markerEnd} style={{ strokeWidth: n > 0 ? 2 : 1.2, stroke: n > 0 ? "#1f5fbf" : "#b1b8c6" }} />
      <EdgeLabelRenderer>
        <span
          className={`edge-count${n > 0 ? "" : " edge-count-zero"}`}
          data-edge={`${source}->${target}${data?.label ? `:${data.label}` : ""}`}
          title={`${count(n)} ${n === 1 ? "run" : "runs"} took this way`}
          style={{ transform: `translate(-50%, -50%) translate(${labelX}px, ${labelY}px)` }}
        >
          {data?.label ? `${data.label} · ` : ""}
          {count(n)}
        </span>
      </EdgeLabelRenderer>
    </>
  );
}
