"use client";

import type { FormContext } from "../../../forms/widgets";
import { PreviewPanel } from "../preview";
import type { FlowNode } from "./graph-model";
import { StepDrawer } from "./step-drawer";
import type { PanelTab } from "./use-canvas-navigation";
import type { DraftGraph } from "./use-draft-graph";

/** The right panel: its two tabs, Step settings (the selected step's drawer, or a hint) and Preview. */
export function SidePanel(props: {
  orgSlug: string;
  automationId: string;
  canEdit: boolean;
  g: DraftGraph;
  tab: PanelTab;
  setTab: (tab: PanelTab) => void;
  current: FlowNode | undefined;
  selectedCount: number;
  formCtx: FormContext | null;
  selectOnly: (id: string) => void;
  setMessage: (text: string | null) => void;
  duplicate: () => void;
  reveal: (id: string, focus: boolean) => void;
}) {
  const { orgSlug, automationId, g, tab, setTab, current, formCtx } = props;
  return (
    <aside className="panel" aria-label={tab === "preview" ? "preview" : "node settings"}>
      <div className="panel-tabs" role="tablist">
        <button type="button" role="tab" aria-selected={tab === "step"} onClick={() => setTab("step")}>
          Step settings
        </button>
        <button type="button" role="tab" aria-selected={tab === "preview"} onClick={() => setTab("preview")}>
          Preview
        </button>
      </div>
      {tab === "preview" ? (
        <PreviewPanel orgSlug={orgSlug} automationId={automationId} graph={g.graph} />
      ) : current && formCtx ? (
        <StepDrawer
          key={current.id}
          orgSlug={orgSlug}
          automationId={automationId}
          canEdit={props.canEdit}
          current={current}
          nodes={g.nodes}
          edges={g.edges}
          publishedIds={g.publishedIds}
          placed={g.placed}
          formKey={g.formKey}
          formCtx={formCtx}
          setNodes={g.setNodes}
          setEdges={g.setEdges}
          setSelected={props.selectOnly}
          setMessage={props.setMessage}
          onDuplicate={props.duplicate}
          onEscape={() => props.reveal(current.id, true)}
        />
      ) : props.selectedCount > 1 ? (
        <p className="small">{props.selectedCount} steps selected: drag one to move them all; Ctrl+C copies, Ctrl+D duplicates, Delete deletes.</p>
      ) : (
        <p className="muted small">Select a step to edit it. Arrows move between steps, A adds one after, Ctrl+K finds one.</p>
      )}
    </aside>
  );
}
