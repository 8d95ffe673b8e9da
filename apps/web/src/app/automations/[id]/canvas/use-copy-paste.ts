"use client";

import { freeOffset } from "../../layout-graph";
import { copySteps, pasteSteps, type Snippet } from "./clipboard";
import type { StepEditsContext } from "./use-step-edits";

/** Copied steps stay available to paste in any automation of this tab. */
let clipboard: Snippet | null = null;

/** Copy, paste and duplicate the selected steps (the pure rules are in clipboard.ts). */
export function useCopyPaste(ctx: StepEditsContext) {
  const { nodes, edges, setNodes, setEdges, publishedIds, canEdit, selectedNodes, reveal, setMessage } = ctx;
  const copy = () => {
    const snippet = copySteps(nodes, edges, new Set(selectedNodes.map((n) => n.id)));
    if (!snippet) return setMessage(selectedNodes.length ? "The trigger is not copied: an automation has one." : "Select the steps to copy first.");
    clipboard = snippet;
    setMessage(`Copied ${snippet.nodes.length} step${snippet.nodes.length === 1 ? "" : "s"}: Ctrl+V pastes.`);
  };
  const paste = (snippet = clipboard) => {
    if (!snippet || !canEdit) return;
    const offset = freeOffset(nodes, snippet.nodes.map((n) => n.position));
    const out = pasteSteps(snippet, new Set(nodes.map((n) => n.id)), publishedIds, offset);
    setNodes((ns) => [...ns.map((n) => (n.selected ? { ...n, selected: false } : n)), ...out.nodes]);
    setEdges((es) => [...es, ...out.edges]);
    const ids = [...out.ids.values()];
    setMessage(`Added ${ids.map((id) => `"${id}"`).join(", ")}: connect ${ids.length === 1 ? "it" : "them"} where ${ids.length === 1 ? "it goes" : "they go"}.`);
    if (ids.length === 1) reveal(ids[0] as string, true);
  };
  const duplicate = () => {
    const snippet = copySteps(nodes, edges, new Set(selectedNodes.map((n) => n.id)));
    if (snippet) paste(snippet);
  };
  return { copy, paste, duplicate };
}
