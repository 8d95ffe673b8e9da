"use client";

import { Handle, type NodeProps, Position } from "@xyflow/react";
import { kindInfo } from "../../kinds";
import { type FlowNode, outputsOf, summaryOf } from "./graph-model";

/**
 * A step on the canvas: kind, title (the step's name or id, the line that must stay readable), and its summary or
 * first problem. Input on top, outputs at the bottom; a step with labelled outputs (approved / rejected) names each
 * just above its handle (layout-graph.ts's heightOf counts that row).
 */
export function StepNode({ id, data, selected }: NodeProps<FlowNode>) {
  const info = kindInfo(data.kind);
  const bad = data.problems.length > 0;
  const outputs = outputsOf(data.kind, data.config);
  const title = data.name ?? id;
  const labelled = outputs.filter((o) => o !== null).length > 1;
  return (
    <div className={`step-node${selected ? " selected" : ""}${bad ? " invalid" : ""}${labelled ? " has-outputs" : ""}`} data-node={id} title={[title, ...data.problems].join("\n")}>
      {data.kind !== "trigger" && <Handle type="target" position={Position.Top} />}
      <div className="step-head">
        <span className="step-icon" aria-hidden>
          {info?.icon ?? "?"}
        </span>
        <span className="step-kind">{info?.label ?? data.kind}</span>
      </div>
      <div className="step-title">{title}</div>
      {bad ? <div className="step-problem">{data.problems[0]}</div> : <div className="step-summary">{summaryOf(info, data.config)}</div>}
      {outputs.map((o, i) =>
        o === null ? (
          <Handle key="next" type="source" position={Position.Bottom} />
        ) : (
          <Handle key={o} id={o} type="source" position={Position.Bottom} style={{ left: `${((i + 1) * 100) / (outputs.length + 1)}%` }}>
            <span className="handle-label">{o}</span>
          </Handle>
        ),
      )}
    </div>
  );
}
