"use client";

import { ReactFlowProvider } from "@xyflow/react";
import "@xyflow/react/dist/style.css";
import "./canvas/editor.css";
import "./canvas/counts.css";
import { useRef, useState } from "react";
import { CanvasArea } from "./canvas/canvas-area";
import { CanvasDialogs } from "./canvas/canvas-dialogs";
import { CountsView } from "./canvas/counts-view";
import { EditorBar, type EditorView } from "./canvas/editor-bar";
import { NewConnectionDialog, useNewConnection } from "./canvas/new-connection";
import { PaletteAside } from "./canvas/palette-aside";
import { SidePanel } from "./canvas/side-panel";
import { type PanelTab, useCanvasNavigation } from "./canvas/use-canvas-navigation";
import { useCanvasKeys } from "./canvas/use-canvas-keys";
import { useCanvasView } from "./canvas/use-canvas-view";
import { useDraftGraph } from "./canvas/use-draft-graph";
import { useEditorView } from "./canvas/use-editor-view";
import { useFormContext } from "./canvas/use-form-context";
import { publishBlockedWhy, usePublish } from "./canvas/use-publish";
import { type Asking, useStepEdits } from "./canvas/use-step-edits";

/**
 * The graph editor: a full-window canvas between the palette (collapsible) and the step drawer. Nodes are the
 * draft's graph; their ids are slugs created once when a node is added and never regenerated (renaming is allowed
 * until the id was published). Every change autosaves (canvas/use-autosave.ts); the server's validation comes back
 * with each save and shows on the nodes and in the drawer. The sections and the jobs live in canvas/: the draft's
 * state (use-draft-graph.ts), moving around (use-canvas-navigation.ts), the step edits, copy and paste, the keyboard,
 * the bar, the canvas and its dialogs, the palette and the side panel.
 */
type EditorProps = { orgSlug: string; automationId: string; automationSlug: string; canEdit: boolean; canManageConnections: boolean; initialView: EditorView };

export function Editor(props: EditorProps) {
  return (
    <ReactFlowProvider>
      <EditorInner {...props} />
    </ReactFlowProvider>
  );
}

function EditorInner({ orgSlug, automationId, automationSlug, canEdit, canManageConnections, initialView }: EditorProps) {
  const input = { orgSlug, automationId };
  const [view, setView] = useEditorView(initialView);
  const [tab, setTab] = useState<PanelTab>("step");
  const [paletteOpen, setPaletteOpen] = useState(true);
  const [asking, setAsking] = useState<Asking>(null);
  const [message, setMessage] = useState<string | null>(null);
  const canvasRef = useRef<HTMLDivElement>(null);
  const { fitTo, reveal } = useCanvasView(canvasRef);
  const g = useDraftGraph({ input, canEdit, fitTo });
  const { nodes, edges, setNodes, setEdges, undo, redo } = g;
  const selectedNodes = nodes.filter((n) => n.selected);
  const current = selectedNodes.length === 1 ? selectedNodes[0] : undefined;
  const nav = useCanvasNavigation({ nodes, edges, setNodes, setEdges, current, reveal, fitTo, setTab });
  const edits = useStepEdits({ nodes, edges, setNodes, setEdges, publishedIds: g.publishedIds, canEdit, current, selectedNodes, reveal, setMessage, setTab, setAsking });
  useCanvasKeys({
    active: view === "edit",
    undo: () => canEdit && undo(),
    redo: () => canEdit && redo(),
    copy: edits.copy,
    paste: () => edits.paste(),
    duplicate: () => canEdit && edits.duplicate(),
    find: () => setAsking({ what: "find" }),
    walk: nav.walk,
    open: nav.openDrawer,
    addAfter: () => canEdit && setAsking({ what: "kind", ...(current ? { after: current.id } : {}) }),
  });
  const connection = useNewConnection(orgSlug);
  const formCtx = useFormContext({ orgSlug, automationId, canEdit, canManageConnections, current, graph: g.graph, newConnection: connection.newConnection });
  const { publishing, doPublish } = usePublish(input, setMessage);

  if (g.draft.isPending) return <p className="muted">Loading the draft…</p>;
  if (g.draft.isError) return <p className="flash flash-error">Could not load the draft: {g.draft.error.message}</p>;
  const { autosave, problems } = g;
  const publishBlocked = publishBlockedWhy({ canEdit, publishing, state: autosave.state, problems: problems.length });
  const graphProblemsList = g.byNode.get("(graph)") ?? [];
  const drawerOpen = tab === "preview" || selectedNodes.length > 0;

  return (
    <div className="editor">
      <NewConnectionDialog orgSlug={orgSlug} creating={connection.creating} onClose={connection.closeCreating} />
      <EditorBar
        view={view}
        onView={setView}
        orgSlug={orgSlug}
        automationId={automationId}
        canEdit={canEdit}
        save={{ state: autosave.state, refusal: autosave.refusal, revision: autosave.revision }}
        problems={{ count: problems.length, placed: g.placed, graph: g.graph }}
        stepCount={nodes.length}
        publishBlocked={publishBlocked}
        message={message}
        onKeepMine={() => {
          setMessage(null);
          void autosave.keepMine();
        }}
        onUndo={undo}
        onRedo={redo}
        onTidy={nav.tidy}
        onFind={() => setAsking({ what: "find" })}
        onPublish={doPublish}
        onProblem={nav.goToProblem}
      />
      {view === "counts" ? <CountsView orgSlug={orgSlug} automationId={automationId} automationSlug={automationSlug} /> : null}
      {view === "edit" && graphProblemsList.length > 0 && <p className="flash flash-error small">{graphProblemsList.join("; ")}</p>}
      <div hidden={view !== "edit"} className={`editor-body${tab === "preview" ? " previewing" : ""}${paletteOpen ? "" : " palette-closed"}${drawerOpen ? "" : " drawer-closed"}`}>
        <PaletteAside open={paletteOpen} setOpen={setPaletteOpen} canEdit={canEdit} onAdd={(kind) => edits.addAfterSelected(kind)} />
        <CanvasArea g={g} canEdit={canEdit} canvasRef={canvasRef} fitTo={fitTo} walk={nav.walk} addStep={edits.addStep} onNodesDelete={edits.onNodesDelete} setAsking={setAsking}>
          <CanvasDialogs asking={asking} setAsking={setAsking} nodes={nodes} edits={edits} goToStep={nav.goToStep} />
        </CanvasArea>
        <SidePanel
          {...{ orgSlug, automationId, canEdit, g, tab, setTab, current, formCtx, reveal, setMessage }}
          selectedCount={selectedNodes.length}
          selectOnly={nav.selectOnly}
          duplicate={edits.duplicate}
        />
      </div>
    </div>
  );
}
