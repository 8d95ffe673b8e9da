import { editLimits } from "@holdfast/core/people";
import type { InboxItem } from "../../server/approvals";
import { editAction } from "./actions";

/**
 * "Edit before approving" on a pending approval of an email: the subject and text, prefilled with the draft as it
 * would be sent, and Save and approve (or save only, leaving the decision to anyone). A plain form: it works
 * without script, and the digest it carries makes a second submit read back what happened instead of acting twice.
 */
export function EditDraft({ a }: { a: InboxItem }) {
  const draft = a.emailDraft;
  if (!draft || a.emailDigest?.revised) return null;
  return (
    <details className="edit-draft" data-edit-draft={a.id}>
      <summary className="edit-draft-toggle">Edit before approving</summary>
      <form action={editAction} className="edit-form">
        <input type="hidden" name="approvalId" value={a.id} />
        <input type="hidden" name="orgId" value={a.orgId} />
        <input type="hidden" name="digest" value={a.digest} />
        <p className="small muted">
          To: <strong>{draft.to}</strong> (the recipient stays as it is)
        </p>
        <label className="form-field">
          <span>Subject</span>
          <input name="subject" defaultValue={draft.subject} required maxLength={editLimits.subject} />
        </label>
        <label className="form-field">
          <span>Email text</span>
          <textarea name="text" defaultValue={draft.text ?? ""} required maxLength={editLimits.text} rows={14} />
        </label>
        {draft.html !== null ? (
          <p className="small hint" data-html-note="1">
            This email also has an HTML version. If you change the subject or the text, the email goes out as your text only: the HTML version is dropped.
          </p>
        ) : null}
        <p className="small muted">
          The email is sent exactly as you save it. The run keeps the original draft and your edit, with your name. To approve or reject the draft as it
          is, close "Edit before approving".
        </p>
        <div className="decide">
          <button type="submit" name="after" value="approve" className="primary">
            Save and approve
          </button>
          <button type="submit" name="after" value="save">
            Save without approving
          </button>
        </div>
      </form>
    </details>
  );
}
