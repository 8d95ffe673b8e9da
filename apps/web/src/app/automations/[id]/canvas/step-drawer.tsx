"use client";

import type { KindModule } from "@holdfast/core/kinds";
import type { Edge } from "@xyflow/react";
import { type Dispatch, type SetStateAction, useState } from "react";
import { StepForm } from "../../../forms/step-form";
import type { FormContext } from "../../../forms/widgets";
import { kindInfo } from "../../kinds";
import { renameReferences } from "../../rename";
import { TriggerSettings } from "../trigger-settings";
import { setOutput } from "./graph-edit";
import { type FlowNode, outputsOf, type PlacedProblem } from "./graph-model";

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
  const [configText, setConfigText] = useState(() => JSON.stringify(current.data.config, null, 2));
  const [configError, setConfigError] = useState<string | null>(null);
  const [idText, setIdText] = useState(current.id);
  const [formKey, setFormKey] = useState(0);
  const module = kindInfo(current.data.kind);

  const renameNode = () => {
    if (idText === current.id) return;
    if (publishedIds.has(current.id)) return setConfigError(`"${current.id}" was published: its id can no longer change`);
    if (!/^[a-z][a-z0-9_]{0,62}$/.test(idText)) return setConfigError("an id is a lowercase slug: a letter, then letters, digits or _");
    if (nodes.some((n) => n.id === idText)) return setConfigError(`"${idText}" is taken`);
    if (publishedIds.has(idText)) return setConfigError(`"${idText}" was used by a published version: it stays reserved for that step, pick another id`);
    const from = current.id;
    // Every reference to the step (templates, conditions, replyTo) follows the rename.
    let references = 0;
    const renamed = nodes.map((n) => {
      const { config, changed } = renameReferences(n.data.config, from, idText);
      references += changed;
      return { ...n, id: n.id === from ? idText : n.id, data: changed ? { ...n.data, config } : n.data };
    });
    setNodes(renamed);
    props.setMessage(references ? `Renamed "${from}" to "${idText}" and updated ${references} reference${references === 1 ? "" : "s"} to it.` : null);
    setEdges((es) =>
      es.map((e) => ({ ...e, source: e.source === from ? idText : e.source, target: e.target === from ? idText : e.target, id: e.id.replaceAll(from, idText) })),
    );
    props.setSelected(idText);
  };

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
  const outputs = outputsOf(current.data.kind);

  return (
    // biome-ignore lint/a11y/noStaticElementInteractions: Escape returns to the canvas from anywhere in the drawer
    <div
      className="stack step-drawer"
      onKeyDown={(e) => {
        if (e.key === "Escape" && !(e.target as HTMLElement).closest(".var-picker-menu, [role=dialog]")) props.onEscape();
      }}
    >
      <div className="drawer-row">
        <label className="grow">
          Step id
          <input
            name="node-id"
            value={idText}
            disabled={!canEdit || publishedIds.has(current.id)}
            onChange={(e) => setIdText(e.target.value)}
            onBlur={renameNode}
            onKeyDown={(e) => e.key === "Enter" && renameNode()}
          />
        </label>
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
      {current.data.kind === "trigger" && (
        <TriggerSettings orgSlug={props.orgSlug} automationId={props.automationId} canEdit={canEdit} steps={nodes.map((n) => ({ id: n.id, kind: n.data.kind }))} />
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
      {outputs.length > 0 && (
        <fieldset className="outputs stack">
          <legend>Then</legend>
          {outputs.map((o) => {
            const target = edges.find((e) => e.source === current.id && (e.sourceHandle ?? null) === o)?.target ?? "";
            return (
              <label key={o ?? "next"} className="row-inline">
                <span className="output-name">{o ? (module?.outputWords?.[o] ?? `When ${o}, go to`) : "Next step"}</span>
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
      )}
      <details className="advanced-json">
        <summary>Advanced: settings as JSON</summary>
        <textarea name="node-config" rows={14} value={configText} disabled={!canEdit} onChange={(e) => editConfig(e.target.value)} spellCheck={false} />
      </details>
      {configError && (
        <p className="field-error" role="alert">
          {configError}
        </p>
      )}
    </div>
  );
}
