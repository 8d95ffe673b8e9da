"use client";

import { addEdge, Background, type Connection, ControlButton, Controls, type Edge, MarkerType, MiniMap, ReactFlow, useReactFlow } from "@xyflow/react";
import { type DragEvent, type ReactNode, type RefObject, useCallback } from "react";
import { readableMinZoom } from "../../layout-graph";
import { EditorActionsContext } from "./editor-actions";
import { edgeOf, type FlowNode } from "./graph-model";
import { InsertableEdge } from "./insertable-edge";
import { StepNode } from "./step-node";
import type { DraftGraph } from "./use-draft-graph";
import type { Asking } from "./use-step-edits";

const nodeTypes = { step: StepNode };
const edgeTypes = { insertable: InsertableEdge };
const defaultEdgeOptions = { type: "insertable", markerEnd: { type: MarkerType.ArrowClosed, width: 16, height: 16 } };

type AddStep = (kind: string, position: { x: number; y: number }, wire: (es: Edge[]) => Edge[]) => unknown;

/** A new edge drawn from an output (it replaces that output's edge), and a step dropped from the palette. */
function useWiring(setEdges: DraftGraph["setEdges"], addStep: AddStep) {
  const flow = useReactFlow();
  const onConnect = useCallback(
    (c: Connection) =>
      setEdges((es) =>
        addEdge(
          edgeOf(c.source, c.target, c.sourceHandle),
          // One edge per output: connecting an output again replaces its edge.
          es.filter((e) => !(e.source === c.source && (e.sourceHandle ?? null) === (c.sourceHandle ?? null))),
        ),
      ),
    [setEdges],
  );
  const onDrop = (e: DragEvent) => {
    e.preventDefault();
    const kind = e.dataTransfer.getData("application/holdfast-kind");
    if (kind) addStep(kind, flow.screenToFlowPosition({ x: e.clientX, y: e.clientY }), (es) => es);
  };
  return { onConnect, onDrop };
}

/**
 * The canvas itself: the journey's steps and edges (React Flow), one stop in the tab order, a drop target for the
 * palette, with the fit button and the overview map. `children` are the dialogs shown over it.
 */
export function CanvasArea(props: {
  g: DraftGraph;
  canEdit: boolean;
  canvasRef: RefObject<HTMLDivElement | null>;
  fitTo: (placed: FlowNode[]) => void;
  walk: (key: string) => void;
  addStep: AddStep;
  onNodesDelete: (deleted: FlowNode[]) => void;
  setAsking: (asking: Asking) => void;
  children: ReactNode;
}) {
  const { g, canEdit } = props;
  const { onConnect, onDrop } = useWiring(g.setEdges, props.addStep);
  return (
    <div
      className="canvas"
      role="application"
      aria-label="canvas"
      aria-roledescription="journey canvas: arrows move between steps, Enter opens a step, A adds a step after it, Delete deletes"
      ref={props.canvasRef}
      // biome-ignore lint/a11y/noNoninteractiveTabindex: the canvas (an application) is one stop in the tab order; focus goes on to a step
      tabIndex={0}
      onFocus={(e) => {
        // Tabbing in lands on a step; Shift+Tab out of a step stops here on its way back to the palette.
        if (e.target !== e.currentTarget || e.currentTarget.contains(e.relatedTarget as Node | null)) return;
        props.walk("");
      }}
      onDrop={onDrop}
      onDragOver={(e) => e.preventDefault()}
    >
      <EditorActionsContext.Provider value={{ canEdit, insertOnEdge: (edgeId) => props.setAsking({ what: "kind", edgeId }) }}>
        <ReactFlow
          nodes={g.nodes}
          edges={g.edges}
          nodeTypes={nodeTypes}
          edgeTypes={edgeTypes}
          defaultEdgeOptions={defaultEdgeOptions}
          onNodesChange={canEdit ? g.onNodesChange : undefined}
          onEdgesChange={canEdit ? g.onEdgesChange : undefined}
          onNodesDelete={canEdit ? props.onNodesDelete : undefined}
          onConnect={canEdit ? onConnect : undefined}
          deleteKeyCode={canEdit ? ["Backspace", "Delete"] : null}
          multiSelectionKeyCode={["Shift", "Meta", "Control"]}
          selectionKeyCode="Shift"
          nodesDraggable={canEdit}
          nodesConnectable={canEdit}
          edgesFocusable={false}
          panOnScroll
          minZoom={readableMinZoom}
          maxZoom={1.5}
        >
          <Background />
          <Controls showInteractive={false} showFitView={false}>
            <ControlButton className="react-flow__controls-fitview" title="Fit the journey (never below a readable size)" aria-label="Fit the journey" onClick={() => props.fitTo(g.nodes)}>
              ⤢
            </ControlButton>
          </Controls>
          <MiniMap pannable zoomable ariaLabel="Overview: drag to move around the journey" style={{ width: 120, height: 90 }} />
        </ReactFlow>
      </EditorActionsContext.Provider>
      {props.children}
    </div>
  );
}
