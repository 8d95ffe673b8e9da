import type { Story } from "@holdfast/core/story";

/** The email the run sent (or would send, for a test run): as recorded, reconstructed, or erased with the contact. */
export function EmailCard({ email, story, test }: { email: NonNullable<Story["email"]>; story: Story; test: boolean }) {
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
        <pre className="content email-body">{email.body}</pre>
        {email.html !== null && email.html !== email.body ? (
          <details>
            <summary>HTML version (source)</summary>
            <pre className="content email-html" style={{ maxHeight: "14rem" }}>
              {email.html}
            </pre>
          </details>
        ) : null}
        {test ? (
          <p className="muted small" data-email-simulated="1">
            Test run: this is the message exactly as it would go out (its headers are in the step's output); it was not sent to anyone.
          </p>
        ) : email.source === "recorded" ? (
          <p className="muted small">As sent: recorded by the step when the mail server took it.</p>
        ) : (
          <p className="muted small" data-email-reconstructed="1">
            Reconstructed: this run was sent before emails were recorded, so the subject and body are the step's templates
            rendered again with this run's data (the contact as stored now), and may differ from what was sent.
          </p>
        )}
      </div>
    </section>
  );
}
