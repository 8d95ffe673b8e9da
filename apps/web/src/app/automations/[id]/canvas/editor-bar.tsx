"use client";

import Link from "next/link";
import type { GraphJson, PlacedProblem } from "./graph-model";
import { ProblemsMenu } from "./problems-menu";
import { busyWords } from "./save-outcome";
import type { SaveState } from "./use-autosave";

const stateText: Record<SaveState, string> = {
  saved: "All changes saved",
  dirty: "Unsaved changes…",
  saving: "Saving…",
  busy: busyWords,
  conflict: "Saved elsewhere meanwhile: this tab's edits are not saved yet.",
  refused: "Not saved",
};

export type EditorView = "edit" | "counts";

/** "View: edit | counts": editing the draft, or the published journey with how many runs are where. */
function ViewToggle({ view, onView }: { view: EditorView; onView: (v: EditorView) => void }) {
  return (
    <fieldset className="view-toggle" aria-label="View">
      <button type="button" aria-pressed={view === "edit"} onClick={() => onView("edit")} title="Edit the draft">
        View: edit
      </button>
      <button type="button" aria-pressed={view === "counts"} onClick={() => onView("counts")} title="How many runs are at each step, and what they did">
        View: counts
      </button>
    </fieldset>
  );
}

/**
 * The editor's one line: the view (edit or counts), whether everything is saved, undo and redo, Tidy, the problems
 * count (a list that goes to each problem), Publish (and why not yet), Versions, and the last message. In the counts
 * view only what reads is shown.
 */
export function EditorBar(props: {
  view: EditorView;
  onView: (v: EditorView) => void;
  orgSlug: string;
  automationId: string;
  canEdit: boolean;
  save: { state: SaveState; refusal: string | null; revision: number };
  problems: { count: number; placed: PlacedProblem[]; graph: GraphJson };
  stepCount: number;
  publishBlocked: string | null;
  message: string | null;
  onKeepMine: () => void;
  onUndo: () => void;
  onRedo: () => void;
  onTidy: () => void;
  onFind: () => void;
  onPublish: () => void;
  onProblem: (p: PlacedProblem) => void;
}) {
  const { canEdit } = props;
  const { state, refusal, revision } = props.save;
  if (props.view === "counts") {
    return (
      <div className="editor-bar">
        <ViewToggle view={props.view} onView={props.onView} />
        <Link href={`/automations/${props.automationId}/versions?org=${props.orgSlug}`}>Versions</Link>
      </div>
    );
  }
  return (
    <div className="editor-bar">
      <ViewToggle view={props.view} onView={props.onView} />
      <span className={`save-state save-${state}`} role="status">
        {stateText[state]}
        {state === "refused" && refusal ? `: ${refusal}` : ""}
      </span>
      {state === "conflict" && canEdit && (
        <button type="button" onClick={props.onKeepMine}>
          Keep this tab's version
        </button>
      )}
      <span className="muted small">revision {revision}</span>
      <button type="button" onClick={props.onUndo} disabled={!canEdit} title="Undo (Ctrl+Z)">
        Undo
      </button>
      <button type="button" onClick={props.onRedo} disabled={!canEdit} title="Redo (Ctrl+Shift+Z)">
        Redo
      </button>
      <button type="button" onClick={props.onTidy} disabled={!canEdit || props.stepCount < 2} title="Arrange the steps from top to bottom">
        Tidy layout
      </button>
      <button type="button" onClick={props.onFind} title="Find a step by name (Ctrl+K)">
        Find
      </button>
      <ProblemsMenu state={state} {...props.problems} onProblem={props.onProblem} />
      <button type="button" className="primary" onClick={props.onPublish} disabled={props.publishBlocked !== null} title={props.publishBlocked ?? "Publish this draft as a new version"}>
        Publish
      </button>
      {props.publishBlocked && <span className="small muted publish-why">{props.publishBlocked}</span>}
      <Link href={`/automations/${props.automationId}/versions?org=${props.orgSlug}`}>Versions</Link>
      {props.message ? <span className="editor-message">{props.message}</span> : null}
    </div>
  );
}
