import type { StoryAction } from "@holdfast/core/story";
import Link from "next/link";
import { resumeAction } from "../actions";
import type { RunRef } from "./words";

/** The button (or link) for one of the status sentence's actions; people who may not act are told who can. */
export function ActionFor({ action, canAct, mayAct, hidden }: { action: StoryAction; canAct: boolean; mayAct: boolean; hidden: RunRef }) {
  switch (action) {
    case "resume":
      return canAct ? (
        <form action={resumeAction}>
          <input type="hidden" name="runId" value={hidden.runId} />
          <input type="hidden" name="orgId" value={hidden.orgId} />
          <button type="submit" className="primary">
            Resume
          </button>
        </form>
      ) : (
        <span className="muted small">An owner or editor can resume it.</span>
      );
    case "raise_budget":
      return mayAct ? (
        <Link className="button-link" href="/settings">
          Raise the model budget (Settings)
        </Link>
      ) : null;
    case "reconnect":
      return mayAct ? (
        <Link className="button-link" href="/settings">
          Fix the connection (Settings)
        </Link>
      ) : null;
    case "decide":
      return (
        <Link className="button-link" href="/approvals">
          Open the approvals inbox
        </Link>
      );
    case "resolve":
      return null; // the review form below the sentence
    case "retry":
      return null; // the RETRY ACTIONS slot
  }
}
