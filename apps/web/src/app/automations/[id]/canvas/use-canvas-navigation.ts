"use client";

import type { Edge } from "@xyflow/react";
import { type Dispatch, type SetStateAction, useCallback, useEffect } from "react";
import { tidyLayout } from "../../layout-graph";
import { focusDrawerSoon, focusProblemFieldSoon } from "./focus";
import { type FlowNode, outputsOf, type PlacedProblem } from "./graph-model";
import { neighbour } from "./navigate";

export type PanelTab = "step" | "preview";

/**
 * Moving around the canvas: select one step, walk to a neighbour with the arrows, open a step's drawer, go to a
 * problem or a found step, and tidy the layout. The selected step is kept on screen when the drawer narrows the canvas.
 */
export function useCanvasNavigation(ctx: {
  nodes: FlowNode[];
  edges: Edge[];
  setNodes: Dispatch<SetStateAction<FlowNode[]>>;
  setEdges: Dispatch<SetStateAction<Edge[]>>;
  current: FlowNode | undefined;
  reveal: (id: string, focus: boolean) => void;
  fitTo: (placed: FlowNode[], duration?: number) => void;
  setTab: (tab: PanelTab) => void;
}) {
  const { nodes, edges, setNodes, setEdges, current, reveal, fitTo, setTab } = ctx;
  const selectOnly = useCallback(
    (id: string) => {
      setNodes((ns) => ns.map((n) => (!!n.selected === (n.id === id) ? n : { ...n, selected: n.id === id })));
      setEdges((es) => (es.some((e) => e.selected) ? es.map((e) => ({ ...e, selected: false })) : es));
    },
    [setNodes, setEdges],
  );

  const tidy = () => {
    const at = tidyLayout(nodes, edges, (id) => {
      const node = nodes.find((n) => n.id === id);
      return outputsOf(node?.data.kind ?? "", node?.data.config);
    });
    const next = nodes.map((n) => ({ ...n, position: at.get(n.id) ?? n.position }));
    setNodes(next);
    setTimeout(() => fitTo(next), 30);
  };
  /** An arrow: to the connected step that way; "" (the canvas got the focus): the selected step, else the trigger. */
  const walk = (key: string) => {
    const from = current?.id ?? (document.activeElement?.closest(".react-flow__node")?.getAttribute("data-id") || undefined);
    const start = nodes.find((n) => n.data.kind === "trigger")?.id ?? nodes[0]?.id ?? null;
    const next = !from ? start : key ? neighbour(nodes, edges, from, key) : from;
    if (!next) return;
    selectOnly(next);
    reveal(next, true);
  };
  const openDrawer = (id: string) => {
    selectOnly(id);
    setTab("step");
    focusDrawerSoon();
  };
  /** A problem clicked in the list: its node selected and centred, its field focused. */
  const goToProblem = (p: PlacedProblem) => {
    if (p.nodeId === "(graph)") return;
    selectOnly(p.nodeId);
    setTab("step");
    reveal(p.nodeId, false);
    focusProblemFieldSoon(p.nodeId, p.field);
  };
  /** A step picked in the find dialog: selected, its drawer shown, focused on the canvas. */
  const goToStep = (id: string) => {
    selectOnly(id);
    setTab("step");
    reveal(id, true);
  };

  // A step selected by a click opens the drawer, which narrows the canvas: keep the step on screen.
  // biome-ignore lint/correctness/useExhaustiveDependencies: only when another step is selected
  useEffect(() => {
    if (current) reveal(current.id, false);
  }, [current?.id]);

  return { selectOnly, tidy, walk, openDrawer, goToProblem, goToStep };
}
