"use client";

import { BaseEdge, EdgeLabelRenderer, type EdgeProps, getSmoothStepPath } from "@xyflow/react";
import { useEditorActions } from "./editor-actions";

/** An edge drawn with right angles, with a "+" in its middle that puts a new step between its two ends. */
export function InsertableEdge({ id, source, target, sourceX, sourceY, targetX, targetY, sourcePosition, targetPosition, markerEnd, style, selected }: EdgeProps) {
  const { canEdit, insertOnEdge } = useEditorActions();
  const [path, labelX, labelY] = getSmoothStepPath({ sourceX, sourceY, targetX, targetY, sourcePosition, targetPosition, borderRadius: 10, offset: 18 });
  return (
    <>
      <BaseEdge id={id} path={path} markerEnd={markerEnd} style={{ ...style, strokeWidth: selected ? 2.5 : 1.5 }} />
      {canEdit && (
        <EdgeLabelRenderer>
          <button
            type="button"
            className="edge-insert nodrag nopan"
            data-edge={id}
            aria-label={`Insert a step between ${source} and ${target}`}
            title="Insert a step here"
            style={{ transform: `translate(-50%, -50%) translate(${labelX}px, ${labelY}px)` }}
            onClick={(e) => {
              e.stopPropagation();
              insertOnEdge(id);
            }}
          >
            +
          </button>
        </EdgeLabelRenderer>
      )}
    </>
  );
}
