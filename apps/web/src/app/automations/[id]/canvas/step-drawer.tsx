"use client";

import type { KindModule } from "@holdfast/core/kinds";
import type { Edge } from "@xyflow/react";
import { type Dispatch, type SetStateAction, useState } from "react";
import { StepForm } from "../../../forms/step-form";
import type { FormContext } from "../../../forms/widgets";
import { kindInfo } from "../../kinds";
import { EmailStepRates } from "../email-settings";
import { TriggerSettings, useTriggerPanelLoaded } from "../trigger-settings";
import type { FlowNode, PlacedProblem } from "./graph-model";
import { SavedEmailPicker } from "./saved-email-picker";
import { StepIdField } from "./step-id-field";
import { StepOutputs } from "./step-outputs";

/**
 * The step's settings, edited in its form or as JSON: both go straight into the node's config (and autosave). Valid
 * JSON redraws the form; the JSON view follows the form unless it is being typed in.
 */
function useStepConfig(current: FlowNode, setNodes: Dispatch<SetStateAction<FlowNode[]>>) {
  const [configText, setConfigText] = useState(() => JSON.stringify(current.data.config, null, 2));
  const [configError, setConfigError] = useState<string | null>(null);
  const [formKey, setFormKey] = useState(0);

  const editConfig = (text: string) => {
    setConfigText(text);
    try {
      const config = JSON.parse(text);
      setConfigError(null);
      setNodes((ns) => ns.map((n) => (n.id === current.id ? { ...n, data: { ...n.data, config } } : n)));
      setFormKey((k) => k + 1);
    } catch {
      setConfigError("This is not valid JSON yet (check the quotes, commas and brackets): the step keeps its last valid settings.");
    }
  };
  // The form's changes go straight into the node's config (and autosave); the JSON view follows unless it is being typed in.
  const onFormChange = (config: unknown) => {
    setNodes((ns) => ns.map((n) => (n.id === current.id && JSON.stringify(n.data.config) !== JSON.stringify(config) ? { ...n, data: { ...n.data, config } } : n)));
    if ((document.activeElement as HTMLElement | null)?.getAttribute("name") !== "node-config") setConfigText(JSON.stringify(config, null, 2));
  };
  // A whole new config from outside the form (a saved email filled in): stored, and the form redrawn with it.
  const replaceConfig = (config: unknown) => editConfig(JSON.stringify(config, null, 2));
  return { configText, configError, setConfigError, formKey, editConfig, onFormChange, replaceConfig };
}

/**
 * The step drawer (the right panel's "Step settings"): the selected step's id, its form, where each output leads, the
 * settings as JSON, and Duplicate. Escape hands the focus back to the step on the canvas.
 */
export function StepDrawer(props: {
  orgSlug: string;
  automationId: string;
  canEdit: boolean;
  current: FlowNode;
  nodes: FlowNode[];
  edges: Edge[];
  publishedIds: ReadonlySet<string>;
  placed: PlacedProblem[];
  formKey: number;
  formCtx: FormContext;
  setNodes: Dispatch<SetStateAction<FlowNode[]>>;
  setEdges: Dispatch<SetStateAction<Edge[]>>;
  setSelected: (id: string) => void;
  setMessage: (text: string | null) => void;
  onDuplicate: () => void;
  onEscape: () => void;
}) {
  const { current, nodes, edges, canEdit, publishedIds, setNodes, setEdges } = props;
  const { configText, configError, setConfigError, formKey, editConfig, onFormChange, replaceConfig } = useStepConfig(current, setNodes);
  const module = kindInfo(current.data.kind);
  const isTrigger = current.data.kind === "trigger";
  const triggerLoaded = useTriggerPanelLoaded(props.orgSlug, props.automationId, isTrigger);

  return (
    // biome-ignore lint/a11y/noStaticElementInteractions: Escape returns to the canvas from anywhere in the drawer
    <div
      className="stack step-drawer"
      onKeyDown={(e) => {
        if (e.key === "Escape" && !(e.target as HTMLElement).closest(".var-picker-menu, [role=dialog]")) props.onEscape();
      }}
    >
      <div className="drawer-row">
        <StepIdField {...{ current, nodes, canEdit, publishedIds, setNodes, setEdges }} setSelected={props.setSelected} setMessage={props.setMessage} setError={setConfigError} />
        {canEdit && current.data.kind !== "trigger" && (
          <button type="button" onClick={props.onDuplicate} title="Duplicate this step (Ctrl+D)">
            Duplicate
          </button>
        )}
      </div>
      {publishedIds.has(current.id) && <span className="small muted">Published: the id is fixed (runs and migrations name it).</span>}
      <div className="panel-kind">
        {module?.icon} {module?.label ?? current.data.kind}
      </div>
      {isTrigger && !triggerLoaded ? (
        <p className="muted small" aria-busy="true">
          Loading the trigger's settings…
        </p>
      ) : (
        <>
          {isTrigger && (
            <TriggerSettings orgSlug={props.orgSlug} automationId={props.automationId} canEdit={canEdit} steps={nodes.map((n) => ({ id: n.id, kind: n.data.kind }))} />
          )}
          {current.data.kind === "send_email" && (
            <SavedEmailPicker orgSlug={props.orgSlug} canEdit={canEdit} config={(current.data.config ?? {}) as Record<string, never>} apply={replaceConfig} />
          )}
          {module ? (
            <StepForm
              key={`${current.id}:${props.formKey}:${formKey}`}
              module={module as KindModule}
              config={current.data.config}
              onChange={onFormChange}
              ctx={props.formCtx}
              problems={props.placed.filter((p) => p.nodeId === current.id).map((p) => [p.field, p.message])}
            />
          ) : (
            <p className="field-error">There is no step kind "{current.data.kind}": change it under Advanced or delete the step.</p>
          )}
          <StepOutputs current={current} nodes={nodes} edges={edges} canEdit={canEdit} setEdges={setEdges} />
          {current.data.kind === "send_email" && <EmailStepRates orgSlug={props.orgSlug} automationId={props.automationId} nodeId={current.id} />}
          <details className="advanced-json">
            <summary>Advanced: settings as JSON</summary>
            <textarea name="node-config" rows={14} value={configText} disabled={!canEdit} onChange={(e) => editConfig(e.target.value)} spellCheck={false} />
          </details>
        </>
      )}
      {configError && (
        <p className="field-error" role="alert">
          {configError}
        </p>
      )}
    </div>
  );
}
