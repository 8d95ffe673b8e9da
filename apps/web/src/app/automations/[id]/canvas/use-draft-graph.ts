"use client";

import { useQuery } from "@tanstack/react-query";
import { type Edge, useEdgesState, useNodesState } from "@xyflow/react";
import { useEffect, useMemo, useRef, useState } from "react";
import { useTRPC } from "../../../../server/trpc/client";
import { type FlowNode, type GraphJson, type Problem, placeProblems, problemsByNode, toFlow, toGraph } from "./graph-model";
import { useAutosave } from "./use-autosave";
import { useHistory } from "./use-history";
import { useProblemsOnNodes, useSaveOnChange, useWarnUnsaved } from "./use-draft-effects";

/**
 * The draft on the canvas: its steps and edges as React Flow state, loaded once from the saved draft, autosaved
 * after each settled change, with undo and redo, and the problems of the last save placed on the steps.
 */
export function useDraftGraph({ input, canEdit, fitTo }: { input: { orgSlug: string; automationId: string }; canEdit: boolean; fitTo: (placed: FlowNode[], duration?: number) => void }) {
  const trpc = useTRPC();
  const draft = useQuery(trpc.drafts.get.queryOptions(input, { refetchOnWindowFocus: false }));
  const [formKey, setFormKey] = useState(0);
  const [nodes, setNodes, onNodesChange] = useNodesState<FlowNode>([]);
  const [edges, setEdges, onEdgesChange] = useEdgesState<Edge>([]);
  const [problems, setProblems] = useState<Problem[]>([]);
  const loaded = useRef(false);
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
  useProblemsOnNodes(byNode, setNodes);
  useSaveOnChange({ loaded, canEdit, graphText, autosave, record });
  useWarnUnsaved(graphText, autosave.lastSaved);

  return { draft, nodes, setNodes, onNodesChange, edges, setEdges, onEdgesChange, graph, problems, placed, byNode, formKey, publishedIds, autosave, undo, redo };
}

export type DraftGraph = ReturnType<typeof useDraftGraph>;
