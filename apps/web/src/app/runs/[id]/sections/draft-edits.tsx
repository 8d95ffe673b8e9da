import type { ApprovalEditRow } from "@holdfast/core/store";
import type { ReactNode } from "react";

/**
 * An approval's email as its approver edited it before approving: who, when and where, what changed, and the
 * original draft beside the edit. Shown with the approval (Details) and under "The email it sent".
 */
export function DraftEdits({ edits, when }: { edits: ApprovalEditRow[]; when: (at: Date) => ReactNode }) {
  if (edits.length === 0) return null;
  return (
    <div className="draft-edits" data-draft-edits={edits.length}>
      {edits.map((e) => (
        <div key={e.id} className="draft-edit" data-edit={e.id}>
          <p className="small">
            <strong>Edited by {e.editedByName}</strong> {e.via === "slack" ? "in Slack" : "in the approvals inbox"}, {when(e.createdAt)}: changed{" "}
            {changedWords(e)}.
            {e.hadHtml ? " The email had an HTML version: an edit is plain text, so the HTML version was dropped and only the edited text is sent." : ""}
          </p>
          <div className="draft-compare">
            <div>
              <h4 className="small muted">Original draft</h4>
              <pre className="content small" data-original-draft="1">{`Subject: ${e.originalSubject}\n\n${e.originalText ?? "(no text: the email had only an HTML version)"}`}</pre>
            </div>
            <div>
              <h4 className="small muted">As edited</h4>
              <pre className="content small" data-edited-draft="1">{`Subject: ${e.editedSubject}\n\n${e.editedText}`}</pre>
            </div>
          </div>
        </div>
      ))}
    </div>
  );
}

function changedWords(e: ApprovalEditRow): string {
  const parts = [e.originalSubject !== e.editedSubject ? "the subject" : null, e.originalText !== e.editedText ? "the text" : null].filter((p) => p !== null);
  return parts.length > 0 ? parts.join(" and ") : "nothing but the HTML version";
}
