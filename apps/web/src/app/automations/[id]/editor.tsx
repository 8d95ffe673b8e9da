"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import {
  addEdge,
  Background,
  type Connection,
  ControlButton,
  Controls,
  type Edge,
  MarkerType,
  MiniMap,
  ReactFlow,
  ReactFlowProvider,
  useEdgesState,
  useNodesState,
  useReactFlow,
} from "@xyflow/react";
import "@xyflow/react/dist/style.css";
import "./canvas/editor.css";
import { connectionKind, variablesAt } from "@holdfast/core/kinds";
import { type DragEvent, useCallback, useEffect, useMemo, useRef, useState } from "react";
import { reloadAfterWrite, useTRPC } from "../../../server/trpc/client";
import { fieldId } from "../../forms/step-form";
import type { FormContext } from "../../forms/widgets";
import { ConnectionForm } from "../../settings/connection-form";
import { kindInfo, palette } from "../kinds";
import { boundsOf, fitReadable, nodeSize, readableMinZoom, tidyLayout } from "../layout-graph";
import { Palette } from "../palette";
import { type Choice, Chooser } from "./canvas/chooser";
import { EditorActionsContext } from "./canvas/editor-actions";
import { EditorBar } from "./canvas/editor-bar";
import { FindDialog } from "./canvas/find-dialog";
import { edgeOf, type FlowNode, type GraphJson, outputsOf, type PlacedProblem, type Problem, placeProblems, problemsByNode, toFlow, toGraph } from "./canvas/graph-model";
import { InsertableEdge } from "./canvas/insertable-edge";
import { neighbour } from "./canvas/navigate";
import { StepDrawer } from "./canvas/step-drawer";
import { StepNode } from "./canvas/step-node";
import { useAutosave } from "./canvas/use-autosave";
import { useHistory } from "./canvas/use-history";
import { type Asking, useStepEdits } from "./canvas/use-step-edits";
import { useCanvasKeys } from "./canvas/use-canvas-keys";
import { PreviewPanel } from "./preview";

/**
 * The graph editor: a full-window canvas between the palette (collapsible) and the step drawer. Nodes are the
 * draft's graph; their ids are slugs created once when a node is added and never regenerated (renaming is allowed
 * until the id was published). Every change autosaves (canvas/use-autosave.ts); the server's validation comes back
 * with each save and shows on the nodes and in the drawer. The pieces live in canvas/: the step and edge drawings,
 * the wiring edits, copy and paste, the keyboard, the find dialog and the choosers.
 */
const nodeTypes = { step: StepNode };
const edgeTypes = { insertable: InsertableEdge };
const defaultEdgeOptions = { type: "insertable", markerEnd: { type: MarkerType.ArrowClosed, width: 16, height: 16 } };

export function Editor(props: { orgSlug: string; automationId: string; canEdit: boolean; canManageConnections: boolean }) {
  return (
    <ReactFlowProvider>
      <EditorInner {...props} />
    </ReactFlowProvider>
  );
}


function EditorInner({
  orgSlug,
  automationId,
  canEdit,
  canManageConnections,
}: {
  orgSlug: string;
  automationId: string;
  canEdit: boolean;
  canManageConnections: boolean;
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const input = { orgSlug, automationId };
  const draft = useQuery(trpc.drafts.get.queryOptions(input, { refetchOnWindowFocus: false }));
  const publish = useMutation(trpc.versions.publish.mutationOptions());
  // What the forms offer: the organisation's connections and members, and the trigger's sample payload.
  const connectionsList = useQuery(trpc.connections.list.queryOptions({ orgSlug }));
  const membersList = useQuery(trpc.members.list.queryOptions({ orgSlug }));
  const sample = useQuery(trpc.triggers.sample.queryOptions(input, { refetchOnWindowFocus: true }));
  const [formKey, setFormKey] = useState(0);
  const [tab, setTab] = useState<"step" | "preview">("step");
  const [paletteOpen, setPaletteOpen] = useState(true);
  const [asking, setAsking] = useState<Asking>(null);
  const [nodes, setNodes, onNodesChange] = useNodesState<FlowNode>([]);
  const [edges, setEdges, onEdgesChange] = useEdgesState<Edge>([]);
  const [problems, setProblems] = useState<Problem[]>([]);
  const [message, setMessage] = useState<string | null>(null);
  const loaded = useRef(false);
  const canvasRef = useRef<HTMLDivElement>(null);
  const flow = useReactFlow();
  const publishedIds = useMemo(() => new Set(draft.data?.publishedIds ?? []), [draft.data]);

  const graph = useMemo(() => toGraph(nodes, edges), [nodes, edges]);
  const graphText = useMemo(() => JSON.stringify(graph), [graph]);
  const autosave = useAutosave({ input, graph, graphText, onSaved: (s) => setProblems(s.problems) });
  const { undo, redo, record, reset } = useHistory(graphText, (text) => {
    const f = toFlow(JSON.parse(text) as GraphJson);
    setNodes(f.nodes);
    setEdges(f.edges);
    setFormKey((k) => k + 1);
  });
  const selectedNodes = nodes.filter((n) => n.selected);
  const current = selectedNodes.length === 1 ? selectedNodes[0] : undefined;

  /** The view that shows these steps, never below a readable zoom (the rest scrolls). */
  const fitTo = useCallback(
    (placed: { id: string; position: { x: number; y: number } }[], duration = 200) => {
      const box = canvasRef.current?.getBoundingClientRect();
      if (!box || placed.length === 0) return;
      void flow.setViewport(fitReadable(boundsOf(placed), box), { duration });
    },
    [flow],
  );

  // First load: the draft as saved.
  useEffect(() => {
    if (!draft.data || loaded.current) return;
    loaded.current = true;
    const f = toFlow(draft.data.graph as GraphJson);
    setNodes(f.nodes);
    setEdges(f.edges);
    setProblems(draft.data.problems);
    // As the canvas writes it back (an end's empty config, rounded positions): loading alone never saves.
    const text = JSON.stringify(toGraph(f.nodes, f.edges));
    autosave.loaded(text, draft.data.revision);
    reset(text);
    setTimeout(() => fitTo(f.nodes, 0), 50);
  }, [draft.data, setNodes, setEdges, fitTo, autosave.loaded, reset]);

  // Problems from the last save, shown on the nodes.
  const placed = useMemo(() => placeProblems(problems, graph), [problems, graph]);
  const byNode = useMemo(() => problemsByNode(placed, graph), [placed, graph]);
  useEffect(() => {
    setNodes((ns) => {
      let changed = false;
      const next = ns.map((n) => {
        const p = byNode.get(n.id) ?? [];
        if (p.join("\n") === n.data.problems.join("\n")) return n;
        changed = true;
        return { ...n, data: { ...n.data, problems: p } };
      });
      return changed ? next : ns;
    });
  }, [byNode, setNodes]);

  // Autosave 0.8 s after the last change, and a history entry for undo.
  // biome-ignore lint/correctness/useExhaustiveDependencies: one save per settled change of the graph, nothing else
  useEffect(() => {
    if (!loaded.current || !canEdit || graphText === autosave.lastSaved.current || autosave.state === "conflict") return;
    if (autosave.state !== "busy") autosave.setState("dirty");
    const timer = setTimeout(() => {
      record(graphText);
      void autosave.flush();
    }, 800);
    return () => clearTimeout(timer);
  }, [graphText]);

  // An unsaved edit is never lost by leaving the page unwarned.
  useEffect(() => {
    const warn = (e: BeforeUnloadEvent) => {
      if (graphText !== autosave.lastSaved.current) e.preventDefault();
    };
    window.addEventListener("beforeunload", warn);
    return () => window.removeEventListener("beforeunload", warn);
  }, [graphText, autosave.lastSaved]);


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
    [flow],
  );
  const selectOnly = useCallback(
    (id: string) => {
      setNodes((ns) => ns.map((n) => (!!n.selected === (n.id === id) ? n : { ...n, selected: n.id === id })));
      setEdges((es) => (es.some((e) => e.selected) ? es.map((e) => ({ ...e, selected: false })) : es));
    },
    [setNodes, setEdges],
  );

  const tidy = () => {
    const at = tidyLayout(nodes, edges, (id) => outputsOf(nodes.find((n) => n.id === id)?.data.kind ?? ""));
    const next = nodes.map((n) => ({ ...n, position: at.get(n.id) ?? n.position }));
    setNodes(next);
    setTimeout(() => fitTo(next), 30);
  };
  const edits = useStepEdits({ nodes, edges, setNodes, setEdges, publishedIds, canEdit, current, selectedNodes, reveal, setMessage, setTab, setAsking });
  const { addStep, addAfterOn, addAfterSelected, insertStep, onNodesDelete, copy, paste, duplicate } = edits;
  const onDrop = (e: DragEvent) => {
    e.preventDefault();
    const kind = e.dataTransfer.getData("application/holdfast-kind");
    if (kind) addStep(kind, flow.screenToFlowPosition({ x: e.clientX, y: e.clientY }), (es) => es);
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
    setTimeout(() => document.querySelector<HTMLElement>(".panel .step-drawer :is(input, select, textarea, button):not(:disabled)")?.focus(), 60);
  };
  useCanvasKeys({
    undo: () => canEdit && undo(),
    redo: () => canEdit && redo(),
    copy,
    paste: () => paste(),
    duplicate: () => canEdit && duplicate(),
    find: () => setAsking({ what: "find" }),
    walk,
    open: openDrawer,
    addAfter: () => canEdit && setAsking({ what: "kind", ...(current ? { after: current.id } : {}) }),
  });

  // A step selected by a click opens the drawer, which narrows the canvas: keep the step on screen.
  // biome-ignore lint/correctness/useExhaustiveDependencies: only when another step is selected
  useEffect(() => {
    if (current) reveal(current.id, false);
  }, [current?.id]);

  // "New connection" from a step's connection picker: Settings' typed form in a dialog over the editor; the new
  // connection is picked as soon as it is saved.
  const [creating, setCreating] = useState<{ kind: string; resolve: (name: string | null) => void } | null>(null);
  const newConnection = useCallback((kind: string) => new Promise<string | null>((resolve) => setCreating({ kind, resolve })), []);
  const closeCreating = async (name: string | null) => {
    if (name) await reloadAfterWrite(queryClient, trpc.connections.list.queryKey({ orgSlug }));
    creating?.resolve(name);
    setCreating(null);
  };
  /** A problem clicked in the list: its node selected and centred, its field focused. */
  const goToProblem = (p: PlacedProblem) => {
    if (p.nodeId === "(graph)") return;
    selectOnly(p.nodeId);
    setTab("step");
    reveal(p.nodeId, false);
    setTimeout(() => {
      const field = p.field.split(".");
      // The longest field name the problem's path starts with (approvers.users.0 -> approvers).
      for (let i = field.length; i > 0; i--) {
        const el = document.getElementById(fieldId(p.nodeId, field.slice(0, i).join(".")));
        if (el) {
          el.closest("details")?.setAttribute("open", "");
          el.scrollIntoView({ block: "center" });
          (el.matches("input, select, textarea") ? el : (el.querySelector("input, select, textarea") as HTMLElement | null))?.focus();
          return;
        }
      }
    }, 350);
  };

  const doPublish = async () => {
    setMessage(null);
    try {
      const v = await publish.mutateAsync(input);
      const when = new Date(v.publishedAt).toLocaleString();
      setMessage(v.alreadyPublished ? `Already published: this is version ${v.version} (published ${when}).` : `Published version ${v.version}.`);
      // The published ids are fixed from now on: the draft's published ids come back with it.
      await reloadAfterWrite(queryClient, trpc.versions.list.queryKey(input));
      await reloadAfterWrite(queryClient, trpc.drafts.get.queryKey(input));
    } catch (error) {
      setMessage(`Not published: ${(error as Error).message}`);
    }
  };

  if (draft.isPending) return <p className="muted">Loading the draft…</p>;
  if (draft.isError) return <p className="flash flash-error">Could not load the draft: {draft.error.message}</p>;

  const { state } = autosave;
  const publishBlocked = !canEdit
    ? "Only owners and editors can publish."
    : publish.isPending
      ? "Publishing…"
      : state === "dirty" || state === "saving"
        ? "Saving your changes first…"
        : state === "busy"
          ? "Waiting for the save to go through…"
          : state === "conflict"
            ? "Someone else saved meanwhile: keep one version first."
            : state === "refused"
              ? "The last change was not saved."
              : problems.length > 0
                ? `Fix the ${problems.length === 1 ? "problem" : `${problems.length} problems`} first (click the count to see ${problems.length === 1 ? "it" : "them"}).`
                : null;
  const formCtx: FormContext | null = current
    ? {
        orgSlug,
        nodeId: current.id,
        graph,
        variables: variablesAt(graph, current.id, sample.data ?? null),
        sample: sample.data ?? null,
        connections: (connectionsList.data ?? []).map((c) => ({ name: c.name, kind: c.kind, status: c.status })),
        members: (membersList.data ?? []).map((m) => ({ email: m.email, name: m.name, role: m.role })),
        canEdit,
        // Only owners add connections (they hold the secrets); others are told whom to ask.
        ...(canManageConnections ? { newConnection } : {}),
      }
    : null;
  const graphProblemsList = byNode.get("(graph)") ?? [];
  const drawerOpen = tab === "preview" || selectedNodes.length > 0;
  const kindChoices: Choice[] = palette()
    .filter((k) => k.kind !== "trigger")
    .map((k) => ({ key: k.kind, label: k.label, icon: k.icon, hint: k.description }));
  const creatingKind = creating ? connectionKind(creating.kind) : undefined;
  const askingAfter = asking?.what === "output" ? nodes.find((n) => n.id === asking.after) : undefined;

  return (
    <div className="editor">
      {creating && creatingKind && (
        <div className="modal-backdrop">
          <div className="modal" role="dialog" aria-modal="true" aria-label={`New ${creatingKind.label} connection`}>
            <ConnectionForm orgSlug={orgSlug} kind={creatingKind} saved={null} onDone={(_, name) => closeCreating(name)} onCancel={() => closeCreating(null)} />
          </div>
        </div>
      )}
      <EditorBar
        orgSlug={orgSlug}
        automationId={automationId}
        canEdit={canEdit}
        state={state}
        refusal={autosave.refusal}
        revision={autosave.revision}
        problemsCount={problems.length}
        placed={placed}
        graph={graph}
        stepCount={nodes.length}
        publishBlocked={publishBlocked}
        message={message}
        onKeepMine={() => {
          setMessage(null);
          void autosave.keepMine();
        }}
        onUndo={undo}
        onRedo={redo}
        onTidy={tidy}
        onFind={() => setAsking({ what: "find" })}
        onPublish={doPublish}
        onProblem={goToProblem}
      />
      {graphProblemsList.length > 0 && <p className="flash flash-error small">{graphProblemsList.join("; ")}</p>}
      <div className={`editor-body${tab === "preview" ? " previewing" : ""}${paletteOpen ? "" : " palette-closed"}${drawerOpen ? "" : " drawer-closed"}`}>
        <aside className="palette" aria-label="palette">
          <button
            type="button"
            className="palette-toggle"
            aria-expanded={paletteOpen}
            title={paletteOpen ? "Hide the palette" : "Show the palette"}
            onClick={() => setPaletteOpen(!paletteOpen)}
          >
            {paletteOpen ? "« Steps" : "»"}
          </button>
          {paletteOpen && <Palette canEdit={canEdit} onAdd={(kind) => addAfterSelected(kind)} />}
        </aside>
        <div
          className="canvas"
          role="application"
          aria-label="canvas"
          aria-roledescription="journey canvas: arrows move between steps, Enter opens a step, A adds a step after it, Delete deletes"
          ref={canvasRef}
          // biome-ignore lint/a11y/noNoninteractiveTabindex: the canvas (an application) is one stop in the tab order; focus goes on to a step
          tabIndex={0}
          onFocus={(e) => {
            // Tabbing in lands on a step; Shift+Tab out of a step stops here on its way back to the palette.
            if (e.target !== e.currentTarget || e.currentTarget.contains(e.relatedTarget as Node | null)) return;
            walk("");
          }}
          onDrop={onDrop}
          onDragOver={(e) => e.preventDefault()}
        >
          <EditorActionsContext.Provider value={{ canEdit, insertOnEdge: (edgeId) => setAsking({ what: "kind", edgeId }) }}>
            <ReactFlow
              nodes={nodes}
              edges={edges}
              nodeTypes={nodeTypes}
              edgeTypes={edgeTypes}
              defaultEdgeOptions={defaultEdgeOptions}
              onNodesChange={canEdit ? onNodesChange : undefined}
              onEdgesChange={canEdit ? onEdgesChange : undefined}
              onNodesDelete={canEdit ? onNodesDelete : undefined}
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
                <ControlButton
                  className="react-flow__controls-fitview"
                  title="Fit the journey (never below a readable size)"
                  aria-label="Fit the journey"
                  onClick={() => fitTo(nodes)}
                >
                  ⤢
                </ControlButton>
              </Controls>
              <MiniMap pannable zoomable ariaLabel="Overview: drag to move around the journey" style={{ width: 120, height: 90 }} />
            </ReactFlow>
          </EditorActionsContext.Provider>
          {asking?.what === "kind" && (
            <Chooser
              name="kind"
              title={asking.edgeId ? "Which step goes here?" : "Which step comes next?"}
              choices={kindChoices}
              onCancel={() => setAsking(null)}
              onPick={(kind) => {
                setAsking(null);
                if (asking.edgeId) insertStep(kind, asking.edgeId);
                else addAfterSelected(kind, asking.after);
              }}
            />
          )}
          {asking?.what === "output" && askingAfter && (
            <Chooser
              name="output"
              title={`Add "${kindInfo(asking.kind)?.label ?? asking.kind}" after "${askingAfter.data.name ?? askingAfter.id}": on which output?`}
              choices={outputsOf(askingAfter.data.kind).map((o) => ({
                key: o ?? "",
                label: (kindInfo(askingAfter.data.kind)?.outputWords?.[o ?? ""] ?? `When ${o}`).replace(/, go to$/, ""),
              }))}
              onCancel={() => setAsking(null)}
              onPick={(output) => {
                setAsking(null);
                addAfterOn(asking.kind, asking.after, output || null);
              }}
            />
          )}
          {asking?.what === "find" && (
            <FindDialog
              nodes={nodes}
              onClose={() => setAsking(null)}
              onPick={(id) => {
                setAsking(null);
                selectOnly(id);
                setTab("step");
                reveal(id, true);
              }}
            />
          )}
        </div>
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
            <PreviewPanel orgSlug={orgSlug} automationId={automationId} graph={graph} />
          ) : current && formCtx ? (
            <StepDrawer
              key={current.id}
              orgSlug={orgSlug}
              automationId={automationId}
              canEdit={canEdit}
              current={current}
              nodes={nodes}
              edges={edges}
              publishedIds={publishedIds}
              placed={placed}
              formKey={formKey}
              formCtx={formCtx}
              setNodes={setNodes}
              setEdges={setEdges}
              setSelected={selectOnly}
              setMessage={setMessage}
              onDuplicate={duplicate}
              onEscape={() => reveal(current.id, true)}
            />
          ) : selectedNodes.length > 1 ? (
            <p className="small">
              {selectedNodes.length} steps selected: drag one to move them all; Ctrl+C copies, Ctrl+D duplicates, Delete deletes.
            </p>
          ) : (
            <p className="muted small">Select a step to edit it. Arrows move between steps, A adds one after, Ctrl+K finds one.</p>
          )}
        </aside>
      </div>
    </div>
  );
}
