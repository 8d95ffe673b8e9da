"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import {
  addEdge,
  Background,
  type Connection,
  Controls,
  type Edge,
  Handle,
  MiniMap,
  type Node,
  type NodeProps,
  Position,
  ReactFlow,
  ReactFlowProvider,
  useEdgesState,
  useNodesState,
  useReactFlow,
} from "@xyflow/react";
import "@xyflow/react/dist/style.css";
import Link from "next/link";
import { connectionKind, defaultConfigIn, type KindModule, variablesAt } from "@holdfast/core/kinds";
import { type DragEvent, useCallback, useEffect, useMemo, useRef, useState } from "react";
import { reloadAfterWrite, useTRPC } from "../../../server/trpc/client";
import { fieldId, labelOf, StepForm } from "../../forms/step-form";
import { ConnectionForm } from "../../settings/connection-form";
import type { FormContext } from "../../forms/widgets";
import { kindInfo, newNodeId } from "../kinds";
import { Palette } from "../palette";
import { placeNew, tidyLayout } from "../layout-graph";
import { renameReferences } from "../rename";
import { PreviewPanel } from "./preview";
import { TriggerSettings } from "./trigger-settings";

/**
 * The graph editor. Nodes are the draft's graph; their ids are slugs created once when a node is added and never
 * regenerated (renaming is allowed until the id was published). Every change autosaves (0.8 s after the last edit)
 * against the draft's revision; the server's validation comes back with each save and shows on the nodes and in the
 * side panel. Undo / redo, keyboard delete, minimap, zoom to fit. Nothing typed is lost: a save refused because the
 * draft changed elsewhere keeps this tab's edits on screen and says so.
 */
type NodeData = { kind: string; name?: string; config: unknown; problems: string[] };
type FlowNode = Node<NodeData>;
interface GraphJson {
  nodes: { id: string; kind: string; name?: string; config?: unknown; position?: { x: number; y: number } }[];
  edges: { from: string; to: string; label?: string }[];
}
interface Problem {
  path: string;
  message: string;
}

function toFlow(graph: GraphJson): { nodes: FlowNode[]; edges: Edge[] } {
  const nodes = graph.nodes.map((n, i) => ({
    id: n.id,
    type: "step",
    position: n.position ?? { x: (i % 5) * 240, y: Math.floor(i / 5) * 140 },
    data: { kind: n.kind, ...(n.name ? { name: n.name } : {}), config: n.config ?? {}, problems: [] },
  }));
  const edges = graph.edges.map((e) => ({
    id: `${e.from}->${e.to}${e.label ? `:${e.label}` : ""}`,
    source: e.from,
    target: e.to,
    ...(e.label ? { sourceHandle: e.label, label: e.label } : {}),
  }));
  return { nodes, edges };
}

function toGraph(nodes: FlowNode[], edges: Edge[]): GraphJson {
  return {
    nodes: nodes.map((n) => ({
      id: n.id,
      kind: n.data.kind,
      ...(n.data.name ? { name: n.data.name } : {}),
      config: n.data.config,
      position: { x: Math.round(n.position.x), y: Math.round(n.position.y) },
    })),
    edges: edges.map((e) => ({ from: e.source, to: e.target, ...(e.sourceHandle ? { label: e.sourceHandle } : {}) })),
  };
}

/** A problem placed: its node ("(graph)" for the graph's own) and its field under config ("" for the node itself). */
interface PlacedProblem {
  nodeId: string;
  field: string;
  message: string;
}

/** Places "node:<id>.config.<field>" paths, and "nodes.<index>.config.<field>" paths of the shape check. */
function placeProblems(problems: Problem[], graph: GraphJson): PlacedProblem[] {
  return problems.map((p) => {
    const byId = /^node:([a-z][a-z0-9_]*)/.exec(p.path)?.[1];
    const byIndex = /^nodes\.(\d+)/.exec(p.path)?.[1];
    const id = byId ?? (byIndex !== undefined ? graph.nodes[Number(byIndex)]?.id : undefined);
    const rest = p.path.replace(/^node:[a-z0-9_]+\.?|^nodes\.\d+\.?/, "");
    return { nodeId: id ?? "(graph)", field: rest.startsWith("config.") ? rest.slice("config.".length) : rest === "config" ? "" : rest, message: p.message };
  });
}

function problemsByNode(placed: PlacedProblem[], graph: GraphJson): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const p of placed) {
    const kind = graph.nodes.find((n) => n.id === p.nodeId)?.kind ?? "";
    const words = p.field ? `${labelOf(kindInfo(kind), p.field)}: ${p.message}` : p.message;
    out.set(p.nodeId, [...(out.get(p.nodeId) ?? []), words]);
  }
  return out;
}

/** The node's one line: its kind's summary of a valid config, or what is missing. */
function summaryOf(module: KindModule | undefined, config: unknown): string {
  if (!module) return "";
  const parsed = module.config.safeParse(config ?? {});
  if (!parsed.success) return "Not set up yet";
  try {
    return module.summary(parsed.data);
  } catch {
    return "";
  }
}

function StepNode({ id, data, selected }: NodeProps<FlowNode>) {
  const info = kindInfo(data.kind);
  const bad = data.problems.length > 0;
  return (
    <div className={`step-node${selected ? " selected" : ""}${bad ? " invalid" : ""}`} data-node={id} title={data.problems.join("\n")}>
      {data.kind !== "trigger" && <Handle type="target" position={Position.Left} />}
      <div className="step-head">
        <span className="step-icon" aria-hidden>
          {info?.icon ?? "?"}
        </span>
        <span className="step-kind">{info?.label ?? data.kind}</span>
      </div>
      <div className="step-id">{data.name ?? id}</div>
      <div className="step-summary">{summaryOf(info, data.config)}</div>
      {bad && <div className="step-problem">{data.problems[0]}</div>}
      {info?.outputs?.length === 0 ? null : info?.outputs ? (
        info.outputs.map((o, i) => (
          <Handle key={o} id={o} type="source" position={Position.Right} style={{ top: `${30 + i * 40}%` }}>
            <span className="handle-label">{o}</span>
          </Handle>
        ))
      ) : (
        <Handle type="source" position={Position.Right} />
      )}
    </div>
  );
}

const nodeTypes = { step: StepNode };

export function Editor(props: { orgSlug: string; automationId: string; canEdit: boolean; canManageConnections: boolean }) {
  return (
    <ReactFlowProvider>
      <EditorInner {...props} />
    </ReactFlowProvider>
  );
}

type SaveState = "saved" | "dirty" | "saving" | "conflict" | "error";

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
  const save = useMutation(trpc.drafts.save.mutationOptions());
  const publish = useMutation(trpc.versions.publish.mutationOptions());
  // What the forms offer: the organisation's connections and members, and the trigger's sample payload.
  const connectionsList = useQuery(trpc.connections.list.queryOptions({ orgSlug }));
  const membersList = useQuery(trpc.members.list.queryOptions({ orgSlug }));
  const sample = useQuery(trpc.triggers.sample.queryOptions(input, { refetchOnWindowFocus: true }));
  const [formKey, setFormKey] = useState(0);
  const [showProblems, setShowProblems] = useState(false);
  const [tab, setTab] = useState<"step" | "preview">("step");
  const [nodes, setNodes, onNodesChange] = useNodesState<FlowNode>([]);
  const [edges, setEdges, onEdgesChange] = useEdgesState<Edge>([]);
  const [revision, setRevision] = useState(0);
  const [problems, setProblems] = useState<Problem[]>([]);
  const [state, setState] = useState<SaveState>("saved");
  const [message, setMessage] = useState<string | null>(null);
  const [selected, setSelected] = useState<string | null>(null);
  const [configText, setConfigText] = useState("");
  const [configError, setConfigError] = useState<string | null>(null);
  const [idText, setIdText] = useState("");
  const history = useRef<{ past: string[]; future: string[] }>({ past: [], future: [] });
  const lastSaved = useRef<string>("");
  const loaded = useRef(false);
  const flow = useReactFlow();
  const publishedIds = useMemo(() => new Set(draft.data?.publishedIds ?? []), [draft.data]);

  // First load: the draft as saved.
  useEffect(() => {
    if (!draft.data || loaded.current) return;
    loaded.current = true;
    const g = draft.data.graph as GraphJson;
    const f = toFlow(g);
    setNodes(f.nodes);
    setEdges(f.edges);
    setRevision(draft.data.revision);
    setProblems(draft.data.problems);
    // As the canvas writes it back (an end's empty config, rounded positions): loading alone never saves.
    lastSaved.current = JSON.stringify(toGraph(f.nodes, f.edges));
    history.current.past = [lastSaved.current];
    setTimeout(() => flow.fitView({ padding: 0.2 }), 50);
  }, [draft.data, setNodes, setEdges, flow]);

  const graph = useMemo(() => toGraph(nodes, edges), [nodes, edges]);
  const graphText = useMemo(() => JSON.stringify(graph), [graph]);

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

  // Autosave 0.8 s after the last change, and a history entry for undo. One save at a time, each on top of the
  // revision the previous one returned: an edit made while a slow save is in flight waits for it and then saves on
  // its revision (two overlapping saves from one tab would otherwise read as "saved elsewhere" to the marketer).
  const latest = useRef<{ graph: GraphJson; text: string }>({ graph, text: graphText });
  latest.current = { graph, text: graphText };
  const revisionRef = useRef(0);
  revisionRef.current = revision;
  const saving = useRef(false);
  const flush = async () => {
    if (saving.current) return; // the running loop picks up the newest graph when its save returns
    saving.current = true;
    try {
      for (;;) {
        const { graph: next, text } = latest.current;
        if (text === lastSaved.current) break;
        setState("saving");
        const saved = await save.mutateAsync({ ...input, graph: next, baseRevision: revisionRef.current });
        lastSaved.current = text;
        revisionRef.current = saved.revision;
        setRevision(saved.revision);
        setProblems(saved.problems);
        queryClient.setQueryData(trpc.drafts.get.queryKey(input), saved);
      }
      setState("saved");
    } catch (error) {
      saveFailed(error);
    } finally {
      saving.current = false;
    }
  };
  /** A refused save: someone else's save meanwhile (conflict) or anything else (error), with the server's words. */
  const saveFailed = (error: unknown) => {
    const code = (error as { data?: { code?: string } }).data?.code;
    setState(code === "CONFLICT" ? "conflict" : "error");
    setMessage((error as Error).message);
  };
  // biome-ignore lint/correctness/useExhaustiveDependencies: one save per settled change of the graph, nothing else
  useEffect(() => {
    if (!loaded.current || !canEdit || graphText === lastSaved.current || state === "conflict") return;
    setState("dirty");
    const timer = setTimeout(() => {
      const h = history.current;
      if (h.past.at(-1) !== graphText) {
        h.past.push(graphText);
        if (h.past.length > 200) h.past.shift();
        h.future = [];
      }
      void flush();
    }, 800);
    return () => clearTimeout(timer);
  }, [graphText]);

  // An unsaved edit is never lost by leaving the page unwarned.
  useEffect(() => {
    const warn = (e: BeforeUnloadEvent) => {
      if (graphText !== lastSaved.current) e.preventDefault();
    };
    window.addEventListener("beforeunload", warn);
    return () => window.removeEventListener("beforeunload", warn);
  }, [graphText]);

  const restore = useCallback(
    (text: string) => {
      const f = toFlow(JSON.parse(text) as GraphJson);
      setNodes(f.nodes);
      setEdges(f.edges);
      setFormKey((k) => k + 1);
    },
    [setNodes, setEdges],
  );
  const undo = useCallback(() => {
    const h = history.current;
    if (graphText !== h.past.at(-1)) h.past.push(graphText);
    if (h.past.length < 2) return;
    h.future.push(h.past.pop() as string);
    restore(h.past.at(-1) as string);
  }, [graphText, restore]);
  const redo = useCallback(() => {
    const h = history.current;
    const next = h.future.pop();
    if (!next) return;
    h.past.push(next);
    restore(next);
  }, [restore]);
  useEffect(() => {
    const key = (e: KeyboardEvent) => {
      if (!(e.ctrlKey || e.metaKey) || (e.target as HTMLElement).closest("textarea, input")) return;
      if (e.key.toLowerCase() === "z") {
        e.preventDefault();
        e.shiftKey ? redo() : undo();
      } else if (e.key.toLowerCase() === "y") {
        e.preventDefault();
        redo();
      }
    };
    window.addEventListener("keydown", key);
    return () => window.removeEventListener("keydown", key);
  }, [undo, redo]);

  const onConnect = useCallback(
    (c: Connection) =>
      setEdges((es) =>
        addEdge(
          {
            ...c,
            id: `${c.source}->${c.target}${c.sourceHandle ? `:${c.sourceHandle}` : ""}`,
            ...(c.sourceHandle ? { label: c.sourceHandle } : {}),
          },
          // One edge per output: connecting an output again replaces its edge.
          es.filter((e) => !(e.source === c.source && (e.sourceHandle ?? null) === (c.sourceHandle ?? null))),
        ),
      ),
    [setEdges],
  );

  const addNode = useCallback(
    (kind: string, position: { x: number; y: number }) => {
      const info = kindInfo(kind);
      if (!info) return;
      setNodes((ns) => {
        const id = newNodeId(kind, new Set(ns.map((n) => n.id)), publishedIds);
        setSelected(id);
        return [...ns.map((n) => ({ ...n, selected: false })), { id, type: "step", position, selected: true, data: { kind, config: defaultConfigIn(kind, ns.map((n) => n.data)), problems: [] } }];
      });
    },
    [setNodes, publishedIds],
  );
  /**
   * A palette click: the new node lands right of the selected one (never on top of another) and, when the selected
   * node has an output with nothing attached, is connected to it; with nothing selected, right of everything.
   */
  const addAfterSelected = (kind: string) => {
    const after = nodes.find((n) => n.id === selected);
    const taken = new Set(nodes.map((n) => n.id));
    const id = newNodeId(kind, taken, publishedIds);
    const at = placeNew(nodes, after);
    addNode(kind, at);
    // Bring the new step into view (a long automation runs off the canvas's right edge).
    setTimeout(() => flow.setCenter(at.x + 120, at.y + 48, { zoom: Math.max(flow.getZoom(), 0.6), duration: 200 }), 30);
    const outputs = after ? (kindInfo(after.data.kind)?.outputs ?? [null]) : [];
    if (!after || kind === "trigger" || outputs.length === 0) return;
    const edge = (source: string, target: string, handle: string | null): Edge => ({
      id: `${source}->${target}${handle ? `:${handle}` : ""}`,
      source,
      target,
      ...(handle ? { sourceHandle: handle, label: handle } : {}),
    });
    // The first output (approved, true, reply): connected when free, else the new step goes in between (selected ->
    // new -> what came next). Other outputs are wired by dragging from their handles.
    const first = outputs[0] ?? null;
    const next = edges.find((e) => e.source === after.id && (e.sourceHandle ?? null) === first);
    if (!next) return setEdges((es) => [...es, edge(after.id, id, first)]);
    const own = kindInfo(kind)?.outputs;
    if (own?.length === 0) return;
    setEdges((es) => [...es.filter((e) => e !== next), edge(after.id, id, first), edge(id, next.target, own?.[0] ?? null)]);
  };
  /** Wires one output of a node from the panel (the same as dragging its handle): replaces that output's edge. */
  const setOutput = (source: string, output: string | null, target: string) =>
    setEdges((es) => [
      ...es.filter((e) => !(e.source === source && (e.sourceHandle ?? null) === output)),
      ...(target ? [{ id: `${source}->${target}${output ? `:${output}` : ""}`, source, target, ...(output ? { sourceHandle: output, label: output } : {}) }] : []),
    ]);
  const tidy = () => {
    const at = tidyLayout(nodes, edges);
    setNodes((ns) => ns.map((n) => ({ ...n, position: at.get(n.id) ?? n.position })));
    setTimeout(() => flow.fitView({ padding: 0.2 }), 50);
  };
  const onDrop = useCallback(
    (e: DragEvent) => {
      e.preventDefault();
      const kind = e.dataTransfer.getData("application/holdfast-kind");
      if (kind) addNode(kind, flow.screenToFlowPosition({ x: e.clientX, y: e.clientY }));
    },
    [addNode, flow],
  );

  // The side panel follows the selected node (reloaded when another node is selected, not on every edit).
  const current = nodes.find((n) => n.id === selected);
  // biome-ignore lint/correctness/useExhaustiveDependencies: keyed on the selected node's id only
  useEffect(() => {
    if (!current) return;
    setConfigText(JSON.stringify(current.data.config, null, 2));
    setIdText(current.id);
    setConfigError(null);
  }, [current?.id]);

  const editConfig = (text: string) => {
    setConfigText(text);
    try {
      const config = JSON.parse(text);
      setConfigError(null);
      setNodes((ns) => ns.map((n) => (n.id === selected ? { ...n, data: { ...n.data, config } } : n)));
      setFormKey((k) => k + 1);
    } catch (error) {
      setConfigError(`not JSON: ${(error as Error).message}`);
    }
  };
  // The form's changes go straight into the node's config (and autosave); the JSON view follows unless it is being typed in.
  const onFormChange = useCallback(
    (config: unknown) => {
      setNodes((ns) => ns.map((n) => (n.id === selected && JSON.stringify(n.data.config) !== JSON.stringify(config) ? { ...n, data: { ...n.data, config } } : n)));
      if ((document.activeElement as HTMLElement | null)?.getAttribute("name") !== "node-config") setConfigText(JSON.stringify(config, null, 2));
    },
    [selected, setNodes],
  );
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
    setShowProblems(false);
    if (p.nodeId === "(graph)") return;
    setNodes((ns) => ns.map((n) => ({ ...n, selected: n.id === p.nodeId })));
    setSelected(p.nodeId);
    const node = nodes.find((n) => n.id === p.nodeId);
    if (node) flow.setCenter(node.position.x + 100, node.position.y + 40, { zoom: Math.max(flow.getZoom(), 0.9), duration: 300 });
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
  const renameNode = () => {
    if (!current || idText === current.id) return;
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
    setMessage(references ? `Renamed "${from}" to "${idText}" and updated ${references} reference${references === 1 ? "" : "s"} to it.` : null);
    setEdges((es) =>
      es.map((e) => ({ ...e, source: e.source === from ? idText : e.source, target: e.target === from ? idText : e.target, id: e.id.replaceAll(from, idText) })),
    );
    setSelected(idText);
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

  const publishBlocked = !canEdit
    ? "Only owners and editors can publish."
    : publish.isPending
      ? "Publishing…"
      : state === "dirty" || state === "saving"
        ? "Saving your changes first…"
        : state === "conflict"
          ? "Someone else saved meanwhile: keep one version first."
          : state === "error"
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
  const stateText: Record<SaveState, string> = {
    saved: "All changes saved",
    dirty: "Unsaved changes…",
    saving: "Saving…",
    conflict: "Saved elsewhere meanwhile: this tab's edits are not saved yet.",
    error: "Not saved (will retry on the next edit)",
  };

  const creatingKind = creating ? connectionKind(creating.kind) : undefined;
  return (
    <div className="editor">
      {creating && creatingKind && (
        <div className="modal-backdrop">
          <div className="modal" role="dialog" aria-modal="true" aria-label={`New ${creatingKind.label} connection`}>
            <ConnectionForm orgSlug={orgSlug} kind={creatingKind} saved={null} onDone={(_, name) => closeCreating(name)} onCancel={() => closeCreating(null)} />
          </div>
        </div>
      )}
      <div className="editor-bar">
        <span className={`save-state save-${state}`} role="status">
          {stateText[state]}
        </span>
        {state === "conflict" && canEdit && (
          <button
            type="button"
            onClick={async () => {
              // The person chose: this tab's graph replaces the other save (on top of its revision, so nothing is silent).
              if (saving.current) return;
              saving.current = true;
              setState("saving");
              try {
                const { graph: mine, text } = latest.current;
                const fresh = await queryClient.fetchQuery({ ...trpc.drafts.get.queryOptions(input), staleTime: 0 });
                const saved = await save.mutateAsync({ ...input, graph: mine, baseRevision: fresh.revision });
                lastSaved.current = text;
                revisionRef.current = saved.revision;
                setRevision(saved.revision);
                setProblems(saved.problems);
                setMessage(null);
              } catch (error) {
                saveFailed(error);
                return;
              } finally {
                saving.current = false;
              }
              // Edits made while it saved were not autosaved (the tab was in conflict): save them now, then say saved.
              void flush();
            }}
          >
            Keep this tab's version
          </button>
        )}
        <span className="muted small">revision {revision}</span>
        <button type="button" onClick={undo} disabled={!canEdit} title="Undo (Ctrl+Z)">
          Undo
        </button>
        <button type="button" onClick={redo} disabled={!canEdit} title="Redo (Ctrl+Shift+Z)">
          Redo
        </button>
        <button type="button" onClick={tidy} disabled={!canEdit || nodes.length < 2} title="Arrange the steps left to right">
          Tidy layout
        </button>
        <span className="problems-wrap">
          <button
            type="button"
            className={problems.length ? "problems-count bad" : "problems-count ok"}
            aria-expanded={showProblems}
            disabled={problems.length === 0}
            onClick={() => setShowProblems(!showProblems)}
          >
            {state === "dirty" || state === "saving"
              ? "Checking…"
              : problems.length
                ? `${problems.length} problem${problems.length === 1 ? "" : "s"}`
                : "No problems"}
          </button>
          {showProblems && problems.length > 0 && (
            <ul className="problems-list" aria-label="problems">
              {placed.map((p) => {
                const node = graph.nodes.find((n) => n.id === p.nodeId);
                const module = kindInfo(node?.kind ?? "");
                return (
                  <li key={`${p.nodeId}:${p.field}:${p.message}`}>
                    <button type="button" data-problem-node={p.nodeId} data-problem-field={p.field} onClick={() => goToProblem(p)}>
                      <strong>
                        {module?.icon} {node?.name ?? p.nodeId}
                      </strong>
                      {p.field ? <span className="muted"> · {labelOf(module, p.field)}</span> : null}
                      <br />
                      {p.message}
                    </button>
                  </li>
                );
              })}
            </ul>
          )}
        </span>
        <button type="button" className="primary" onClick={doPublish} disabled={publishBlocked !== null} title={publishBlocked ?? "Publish this draft as a new version"}>
          Publish
        </button>
        {publishBlocked && <span className="small muted publish-why">{publishBlocked}</span>}
        <Link href={`/automations/${automationId}/versions?org=${orgSlug}`}>Versions</Link>
        {message ? <span className="editor-message">{message}</span> : null}
      </div>
      {graphProblemsList.length > 0 && <p className="flash flash-error small">{graphProblemsList.join("; ")}</p>}
      <div className={`editor-body${tab === "preview" ? " previewing" : ""}`}>
        <aside className="palette" aria-label="palette">
          <Palette canEdit={canEdit} onAdd={addAfterSelected} />
        </aside>
        <div className="canvas" role="application" aria-label="canvas" onDrop={onDrop} onDragOver={(e) => e.preventDefault()}>
          <ReactFlow
            nodes={nodes}
            edges={edges}
            nodeTypes={nodeTypes}
            onNodesChange={canEdit ? onNodesChange : undefined}
            onEdgesChange={canEdit ? onEdgesChange : undefined}
            onConnect={canEdit ? onConnect : undefined}
            onSelectionChange={({ nodes: sel }) => setSelected(sel[0]?.id ?? null)}
            deleteKeyCode={canEdit ? ["Backspace", "Delete"] : null}
            nodesDraggable={canEdit}
            nodesConnectable={canEdit}
            fitView
            minZoom={0.2}
          >
            <Background />
            <Controls showInteractive={false} />
            <MiniMap pannable zoomable style={{ width: 140, height: 90 }} />
          </ReactFlow>
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
          ) : current ? (
            <div className="stack">
              <label>
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
              {publishedIds.has(current.id) && <span className="small muted">Published: the id is fixed (runs and migrations name it).</span>}
              <div className="panel-kind">
                {kindInfo(current.data.kind)?.icon} {kindInfo(current.data.kind)?.label ?? current.data.kind}
              </div>
              {current.data.kind === "trigger" && (
                <TriggerSettings orgSlug={orgSlug} automationId={automationId} canEdit={canEdit} steps={nodes.map((n) => ({ id: n.id, kind: n.data.kind }))} />
              )}
              {kindInfo(current.data.kind) && formCtx ? (
                <StepForm
                  key={`${current.id}:${formKey}`}
                  module={kindInfo(current.data.kind) as KindModule}
                  config={current.data.config}
                  onChange={onFormChange}
                  ctx={formCtx}
                  problems={placed.filter((p) => p.nodeId === current.id).map((p) => [p.field, p.message])}
                />
              ) : (
                <p className="field-error">There is no step kind "{current.data.kind}": change it under Advanced or delete the step.</p>
              )}
              {(kindInfo(current.data.kind)?.outputs ?? [null]).length > 0 && (
                <fieldset className="outputs stack">
                  <legend>Then</legend>
                  {(kindInfo(current.data.kind)?.outputs ?? [null]).map((o) => {
                    const target = edges.find((e) => e.source === current.id && (e.sourceHandle ?? null) === o)?.target ?? "";
                    return (
                      <label key={o ?? "next"} className="row-inline">
                        <span className="output-name">{o ? (kindInfo(current.data.kind)?.outputWords?.[o] ?? `When ${o}, go to`) : "Next step"}</span>
                        <select name={`output-${o ?? "next"}`} value={target} disabled={!canEdit} onChange={(e) => setOutput(current.id, o, e.target.value)}>
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
          ) : (
            <p className="muted small">Select a node to edit its id and settings. Delete removes the selection; Ctrl+Z undoes.</p>
          )}
        </aside>
      </div>
    </div>
  );
}
