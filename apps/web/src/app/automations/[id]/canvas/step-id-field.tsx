"use client";

import type { Edge } from "@xyflow/react";
import { type Dispatch, type SetStateAction, useState } from "react";
import { renameReferences } from "../../rename";
import type { FlowNode } from "./graph-model";

/**
 * The step's id, renamed on Enter or when the field is left: every reference to the step follows. A published id is
 * fixed, and an id once published stays reserved for its step. What is wrong is said through `setError`.
 */
export function StepIdField(props: {
  current: FlowNode;
  nodes: FlowNode[];
  canEdit: boolean;
  publishedIds: ReadonlySet<string>;
  setNodes: Dispatch<SetStateAction<FlowNode[]>>;
  setEdges: Dispatch<SetStateAction<Edge[]>>;
  setSelected: (id: string) => void;
  setMessage: (text: string | null) => void;
  setError: (text: string | null) => void;
}) {
  const { current, nodes, publishedIds, setError } = props;
  const [idText, setIdText] = useState(current.id);

  const renameNode = () => {
    if (idText === current.id) return;
    if (publishedIds.has(current.id)) return setError(`"${current.id}" was published: its id can no longer change`);
    if (!/^[a-z][a-z0-9_]{0,62}$/.test(idText)) return setError("an id is a lowercase slug: a letter, then letters, digits or _");
    if (nodes.some((n) => n.id === idText)) return setError(`"${idText}" is taken`);
    if (publishedIds.has(idText)) return setError(`"${idText}" was used by a published version: it stays reserved for that step, pick another id`);
    const from = current.id;
    // Every reference to the step (templates, conditions, replyTo) follows the rename.
    let references = 0;
    const renamed = nodes.map((n) => {
      const { config, changed } = renameReferences(n.data.config, from, idText);
      references += changed;
      return { ...n, id: n.id === from ? idText : n.id, data: changed ? { ...n.data, config } : n.data };
    });
    props.setNodes(renamed);
    props.setMessage(references ? `Renamed "${from}" to "${idText}" and updated ${references} reference${references === 1 ? "" : "s"} to it.` : null);
    props.setEdges((es) =>
      es.map((e) => ({ ...e, source: e.source === from ? idText : e.source, target: e.target === from ? idText : e.target, id: e.id.replaceAll(from, idText) })),
    );
    props.setSelected(idText);
  };

  return (
    <label className="grow">
      Step id
      <input
        name="node-id"
        value={idText}
        disabled={!props.canEdit || publishedIds.has(current.id)}
        onChange={(e) => setIdText(e.target.value)}
        onBlur={renameNode}
        onKeyDown={(e) => e.key === "Enter" && renameNode()}
      />
    </label>
  );
}
