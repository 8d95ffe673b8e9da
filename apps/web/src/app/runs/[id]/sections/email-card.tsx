import type { Story } from "@holdfast/core/story";
import type { EmailMessageView } from "@holdfast/core/store";
import type { StepEmailCounts } from "../../../../server/step-email-counts";
import type { ApprovalEditRow } from "@holdfast/core/store";
import { DraftEdits } from "./draft-edits";
import { EmailOutcomes } from "./email-outcomes";

/** The email the run sent (or would send, for a test run): as recorded, reconstructed, or erased with the contact. */
export function EmailCard({ email, story, test, sent = null, rates = null, edits = [] }: {
  email: NonNullable<Story["email"]>;
  story: Story;
  test: boolean;
  /** The message's outcomes (a real run's sent email; none for a test run). */
  sent?: EmailMessageView | null;
  rates?: StepEmailCounts | null;
  /** The approver's edits of this email before approving it: the card says it went out as edited. */
  edits?: ApprovalEditRow[];
}) {
  if (email.source === "erased") {
    return (
      <section aria-label="the email it sent" className="sent-email">
        <h2>{test ? "The email it would send" : "The email it sent"}</h2>
        <p className="muted" data-email-source="erased">
          Sent{email.sentAt ? ` ${story.clock.when(email.sentAt)}` : ""}; its content was erased with the contact.
        </p>
      </section>
    );
  }
  return (
    <section aria-label="the email it sent" className="sent-email">
      <h2>{test ? "The email it would send" : "The email it sent"}</h2>
      <div className="card" data-email-source={email.source}>
        <dl className="facts">
          <dt>To</dt>
          <dd>{email.to}</dd>
          {email.from ? (
            <>
              <dt>From</dt>
              <dd data-email-from="1">{email.from}</dd>
            </>
          ) : null}
          {email.replyTo ? (
            <>
              <dt>Reply-To</dt>
              <dd className="mono small wrap" data-email-reply-to="1">
                {email.replyTo}
              </dd>
            </>
          ) : null}
          <dt>Subject</dt>
          <dd data-email-subject="1">{email.subject}</dd>
          <dt>Sent</dt>
          <dd>{email.sentAt ? story.clock.when(email.sentAt) : "-"}</dd>
          {email.messageId ? (
            <>
              <dt>Message-ID</dt>
              <dd className="mono small wrap" data-email-message-id="1">
                {email.messageId}
              </dd>
            </>
          ) : null}
        </dl>
        {/* Focusable: a long line (a tracked link) scrolls sideways, and the keyboard must reach it too. */}
        {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must take focus to scroll by keyboard */}
        <pre className="content email-body" tabIndex={0}>
          {email.body}
        </pre>
        {email.html !== null && email.html !== email.body ? (
          <details>
            <summary>HTML version (source)</summary>
            <pre className="content email-html" style={{ maxHeight: "14rem" }}>
              {email.html}
            </pre>
          </details>
        ) : null}
        <EditedNote edits={edits} test={test} when={(at) => story.clock.when(at)} />
        {sent ? <EmailOutcomes message={sent} rates={rates} clock={story.clock} /> : null}
        <SourceNote test={test} source={email.source} />
      </div>
    </section>
  );
}

/** Where the card's message comes from: a test run's rendering, the step's record, or its templates rendered again. */
function SourceNote({ test, source }: { test: boolean; source: NonNullable<Story["email"]>["source"] }) {
  if (test) {
    return (
      <p className="muted small" data-email-simulated="1">
        Test run: this is the message exactly as it would go out (its headers are in the step's output); it was not sent to anyone.
      </p>
    );
  }
  if (source === "recorded") return <p className="muted small">As sent: recorded by the step when the mail server took it.</p>;
  return (
    <p className="muted small" data-email-reconstructed="1">
      Reconstructed: this run was sent before emails were recorded, so the subject and body are the step's templates
      rendered again with this run's data (the contact as stored now), and may differ from what was sent.
    </p>
  );
}

/** The email went out as its approver edited it: the original draft and the edit, one click away. */
function EditedNote({ edits, test, when }: { edits: ApprovalEditRow[]; test: boolean; when: (at: Date) => string }) {
  const last = edits.at(-1);
  if (!last) return null;
  return (
    <details className="small" data-email-edited="1">
      <summary>
        {test ? "Would go out" : "Sent"} as {last.editedByName} edited it before approving
        {edits.some((e) => e.hadHtml) ? " (plain text only: the HTML version was dropped)" : ""}: see the original draft
      </summary>
      <DraftEdits edits={edits} when={when} />
    </details>
  );
}
