"use client";

import { createContext, useContext } from "react";

/** What the canvas's own pieces (the "+" on an edge) may ask of the editor. */
export interface EditorActions {
  canEdit: boolean;
  /** Opens the kind chooser for a new step on this edge. */
  insertOnEdge: (edgeId: string) => void;
}

export const EditorActionsContext = createContext<EditorActions>({ canEdit: false, insertOnEdge: () => {} });
export const useEditorActions = () => useContext(EditorActionsContext);
