"use client";

import { useReactFlow } from "@xyflow/react";
import { type RefObject, useCallback } from "react";
import { boundsOf, fitReadable, nodeSize, readableMinZoom } from "../../layout-graph";

/** The canvas's viewport: fit a set of steps, or bring one step into view (and focus it). */
export function useCanvasView(canvasRef: RefObject<HTMLDivElement | null>) {
  const flow = useReactFlow();

  /** The view that shows these steps, never below a readable zoom (the rest scrolls). */
  const fitTo = useCallback(
    (placed: { id: string; position: { x: number; y: number } }[], duration = 200) => {
      const box = canvasRef.current?.getBoundingClientRect();
      if (!box || placed.length === 0) return;
      void flow.setViewport(fitReadable(boundsOf(placed), box), { duration });
    },
    [flow, canvasRef],
  );

  /** The step's box on screen, focused, and brought into view when it is not fully in the canvas. */
  const reveal = useCallback(
    (id: string, focus: boolean) => {
      setTimeout(() => {
        const el = document.querySelector<HTMLElement>(`.react-flow__node[data-id="${CSS.escape(id)}"]`);
        const box = canvasRef.current?.getBoundingClientRect();
        const node = flow.getNode(id);
        if (!el || !box || !node) return;
        const r = el.getBoundingClientRect();
        if (r.left < box.left || r.right > box.right || r.top < box.top || r.bottom > box.bottom) {
          void flow.setCenter(node.position.x + nodeSize.width / 2, node.position.y + nodeSize.height / 2, { zoom: Math.max(flow.getZoom(), readableMinZoom), duration: 200 });
        }
        if (focus) el.focus({ preventScroll: true });
      }, 40);
    },
    [flow, canvasRef],
  );

  return { flow, fitTo, reveal };
}
