"use client";

import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { Background, Controls, MarkerType, ReactFlow, ReactFlowProvider, useNodesInitialized, useReactFlow } from "@xyflow/react";
import { type RefObject, useEffect, useMemo, useRef, useState } from "react";
import { useTRPC } from "../../../../server/trpc/client";
import { fitReadable, nodeSize, readableMinZoom, tidyLayout } from "../../layout-graph";
import { CountEdge, type CountFlowEdge } from "./count-edge";
import { CountNode, type CountFlowNode, CountsPlaceContext } from "./count-node";
import { CountsPanel } from "./counts-panel";
import { arrived, type CountWindow, countWindows, edgeCount, emptyStep, foldLag, type ShownJourney, windowWords } from "./counts-model";
import { outputsOf } from "./graph-model";
import { kindInfo } from "../../kinds";

const nodeTypes = { count: CountNode };
const edgeTypes = { count: CountEdge };
const defaultEdgeOptions = { type: "count", markerEnd: { type: MarkerType.ArrowClosed, width: 16, height: 16 } };
/** A step shows two more lines of counts than when editing: the layers move apart to keep the edges' counts clear. */
const spread = 1.6;
/** How often the counts are read again while shown (they are O(steps) to read). */
const refreshMs = 5_000;

type Props = { orgSlug: string; automationId: string; automationSlug: string };

/**
 * The editor's "View: counts": the journey as published (the chosen version, or the newest one's drawing for all
 * versions) with, on each step, how many runs are there now, passed through, failed or are held, and on each edge
 * how many took it, within the chosen window. Read-only; read again every few seconds.
 */
export function CountsView(props: Props) {
  return (
    <ReactFlowProvider>
      <CountsViewInner {...props} />
    </ReactFlowProvider>
  );
}

function CountsViewInner({ orgSlug, automationId, automationSlug }: Props) {
  const trpc = useTRPC();
  const versions = useQuery(trpc.versions.list.queryOptions({ orgSlug, automationId }, { refetchInterval: 30_000 }));
  const [chosen, setChosen] = useState<number | "all" | undefined>(undefined);
  const [countWindow, setWindow] = useState<CountWindow>("7d");
  const newest = versions.data?.[0]?.version;
  const version = chosen === "all" ? null : (chosen ?? newest);
  const input = { orgSlug, automationId, version: version ?? null, window: countWindow };
  const journey = useQuery(trpc.counts.journey.queryOptions(input, { enabled: version !== undefined, refetchInterval: refreshMs, placeholderData: keepPreviousData }));

  if (versions.isPending) return <p className="muted">Loading the counts…</p>;
  if (versions.isError) return <p className="flash flash-error">Could not load the versions: {versions.error.message}</p>;
  if (newest === undefined) return <p className="empty muted counts-empty">Nothing to count yet: publish this automation, and its runs are counted here.</p>;
  const shown = journey.data?.published ? journey.data : null;
  return (
    <div className="counts-view">
      <div className="counts-bar">
        <label>
          Version{" "}
          <select name="counts-version" value={chosen === "all" ? "all" : String(version)} onChange={(e) => setChosen(e.target.value === "all" ? "all" : Number(e.target.value))}>
            {versions.data.map((v) => (
              <option key={v.id} value={v.version}>
                Version {v.version}
                {v.version === newest ? " (newest)" : ""}
              </option>
            ))}
            <option value="all">All versions</option>
          </select>
        </label>
        <label>
          Window{" "}
          <select name="counts-window" value={countWindow} onChange={(e) => setWindow(e.target.value as CountWindow)}>
            {countWindows.map((w) => (
              <option key={w} value={w}>
                {windowWords[w]}
              </option>
            ))}
          </select>
        </label>
        <Freshness journey={journey} />
      </div>
      {version === null && shown ? (
        <p className="small muted counts-note">All versions together, drawn as version {shown.version} (the newest); steps that only older versions had are not drawn.</p>
      ) : null}
      {journey.isError ? <p className="flash flash-error small">Could not read the counts: {journey.error.message}</p> : null}
      {shown ? (
        <CountsPlaceContext.Provider value={{ orgSlug, automationSlug, version: version ?? null, window: countWindow }}>
          <div className="counts-body">
            <CountsCanvas journey={shown} />
            <CountsPanel journey={shown} allVersions={version === null} />
          </div>
        </CountsPlaceContext.Provider>
      ) : (
        <p className="muted">Counting…</p>
      )}
    </div>
  );
}

/** When the counts were read (they are read again every few seconds), and the fold's lag when it is behind. */
function Freshness({ journey }: { journey: { dataUpdatedAt: number; data?: { published: boolean; counts?: ShownJourney["counts"] }; isFetching: boolean } }) {
  if (!journey.data || !journey.dataUpdatedAt) return null;
  const clock = (d: Date) => d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" });
  const lag = journey.data.counts ? foldLag(journey.data.counts, new Date(journey.dataUpdatedAt), clock) : null;
  return (
    <span className="small muted counts-fresh" role="status">
      Counted at {clock(new Date(journey.dataUpdatedAt))}, updates every {refreshMs / 1000} seconds
      {lag ? <span className="counts-lag"> · {lag}</span> : null}
    </span>
  );
}

function CountsCanvas({ journey }: { journey: ShownJourney }) {
  const { nodes, edges } = useMemo(() => countsFlow(journey), [journey]);
  const box = useRef<HTMLElement>(null);
  return (
    <section ref={box} className="canvas counts-canvas" aria-label="the journey with its counts">
      <ReactFlow
        nodes={nodes}
        edges={edges}
        nodeTypes={nodeTypes}
        edgeTypes={edgeTypes}
        defaultEdgeOptions={defaultEdgeOptions}
        nodesDraggable={false}
        nodesConnectable={false}
        elementsSelectable={false}
        edgesFocusable={false}
        panOnScroll
        minZoom={readableMinZoom}
        maxZoom={1.5}
      >
        <Background />
        <Controls showInteractive={false} />
        <FitOnce box={box} />
      </ReactFlow>
    </section>
  );
}

/** Room between the canvas's edge and the outermost step, in px. */
const fitPadding = 24;

/**
 * The first view, as the editor's Fit makes it (fitReadable): all of the journey with room round it when that is
 * readable, else from the trigger and the leftmost step at the readable zoom (React Flow's own fitView centres what
 * does not fit, cutting off both ends). Bounds from the measured boxes: a step with counts is taller than when editing.
 * Once: a refresh of the counts keeps where the reader has moved to.
 */
function FitOnce({ box }: { box: RefObject<HTMLElement | null> }) {
  const flow = useReactFlow();
  const measured = useNodesInitialized();
  const done = useRef(false);
  useEffect(() => {
    const rect = box.current?.getBoundingClientRect();
    const nodes = flow.getNodes();
    if (!measured || done.current || !rect || nodes.length === 0) return;
    done.current = true;
    const x = Math.min(...nodes.map((n) => n.position.x));
    const y = Math.min(...nodes.map((n) => n.position.y));
    const right = Math.max(...nodes.map((n) => n.position.x + (n.measured?.width ?? nodeSize.width)));
    const bottom = Math.max(...nodes.map((n) => n.position.y + (n.measured?.height ?? nodeSize.height)));
    void flow.setViewport(fitReadable({ x, y, width: right - x, height: bottom - y }, rect, fitPadding));
  }, [measured, flow, box]);
  return null;
}

/** The shown version's graph as the counts canvas draws it: where the editor placed each step (or tidied), with its counts. */
export function countsFlow(journey: ShownJourney): { nodes: CountFlowNode[]; edges: CountFlowEdge[] } {
  const { graph, counts } = journey;
  const placed = graph.nodes.every((n) => n.position)
    ? new Map(graph.nodes.map((n) => [n.id, n.position as { x: number; y: number }]))
    : tidyLayout(
        graph.nodes,
        graph.edges.map((e) => ({ source: e.from, target: e.to, sourceHandle: e.label ?? null })),
        (id) => outputsOf(graph.nodes.find((n) => n.id === id)?.kind ?? "", graph.nodes.find((n) => n.id === id)?.config),
      );
  const nodes = graph.nodes.map((n): CountFlowNode => {
    const p = placed.get(n.id) ?? { x: 0, y: 0 };
    const isStep = kindInfo(n.kind)?.inline === false;
    return {
      id: n.id,
      type: "count",
      position: { x: p.x, y: p.y * spread },
      data: {
        kind: n.kind,
        ...(n.name ? { name: n.name } : {}),
        outputs: outputsOf(n.kind, n.config),
        counts: isStep ? (counts.nodes[n.id] ?? emptyStep) : null,
        arrived: arrived(counts, n.id),
        started: counts.runs.started,
      },
    };
  });
  const edges = graph.edges.map(
    (e): CountFlowEdge => ({
      id: `${e.from}->${e.to}${e.label ? `:${e.label}` : ""}`,
      source: e.from,
      target: e.to,
      type: "count",
      ...(e.label ? { sourceHandle: e.label } : {}),
      data: { n: edgeCount(counts, e.from, e.label, e.to), label: e.label ?? null },
    }),
  );
  return { nodes, edges };
}
