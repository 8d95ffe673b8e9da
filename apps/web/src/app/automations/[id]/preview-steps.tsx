"use client";

import type { StepDetail, StepPreview } from "@holdfast/core/run";
import type { ReactNode } from "react";

/** The preview's steps in order, each as a marketer reads it: the email as the recipient sees it, the call, the instants. */
export function PreviewSteps({ steps }: { steps: StepPreview[] }) {
  return (
    <ol className="preview-steps">
      {withKeys(steps).map(({ s, key }) => {
        const gaps = new Set(s.missing.filter((m) => m.stops).map((m) => `{{${m.path}}}`));
        return (
          <li key={key} className={`preview-step${s.stops ? " preview-stops" : ""}`} data-preview-step={s.nodeId}>
            <div className="preview-step-head">
              <span aria-hidden>{s.icon}</span> <strong>{s.label}</strong> <span className="muted small">{s.name}</span>
            </div>
            <p className="small preview-words">{s.words}</p>
            <Detail detail={s.detail} gaps={gaps} />
            {s.missing.map((m) => (
              <p key={`${m.field}:${m.path}`} className="small preview-gap">
                {m.words} <span className="muted">({m.field})</span>
              </p>
            ))}
            {s.stops && <p className="field-error">{s.stops}</p>}
            {s.assumption && <p className="small muted preview-assumption">{s.assumption}</p>}
          </li>
        );
      })}
    </ol>
  );
}

/** A key per step: its node, and which visit of it (a loop visits a node again). */
function withKeys(steps: StepPreview[]): { s: StepPreview; key: string }[] {
  const seen = new Map<string, number>();
  return steps.map((s) => {
    const n = (seen.get(s.nodeId) ?? 0) + 1;
    seen.set(s.nodeId, n);
    return { s, key: `${s.nodeId}:${n}` };
  });
}

/** Text with each reference that has no value in the sample marked where it stands. */
function Marked({ text, gaps }: { text: string; gaps: Set<string> }) {
  if (gaps.size === 0) return <>{text}</>;
  let at = 0;
  const parts = text.split(/(\{\{[^{}]+\}\})/g).map((p) => {
    at += p.length;
    return { p, key: `${at}:${p.length}` };
  });
  return <>{parts.map(({ p, key }) => (gaps.has(p) ? <mark key={key} title={`${p} is empty in this sample`}>{p}</mark> : <span key={key}>{p}</span>))}</>;
}

function Email({ email, gaps }: { email: { to: string; subject: string; text?: string; html?: string } | null; gaps: Set<string> }) {
  if (!email) return <p className="small field-error">The email cannot be filled in with this sample.</p>;
  return (
    <div className="preview-email">
      <div className="small">
        <span className="muted">To</span> <span data-email-to><Marked text={email.to} gaps={gaps} /></span>
      </div>
      <div className="preview-email-subject" data-email-subject>
        <Marked text={email.subject} gaps={gaps} />
      </div>
      {email.text !== undefined && (
        <div className="preview-email-body" data-email-body>
          <Marked text={email.text} gaps={gaps} />
        </div>
      )}
      {email.html !== undefined && (
        <details className="small">
          <summary>HTML version (source)</summary>
          <pre className="preview-code">
            <Marked text={email.html} gaps={gaps} />
          </pre>
        </details>
      )}
    </div>
  );
}

function Call({ request }: { request: { method: string; url: string; headers: Record<string, string>; body?: unknown } | null }) {
  if (!request) return <p className="small muted">The request cannot be shown: its connection is missing or not set up.</p>;
  return (
    <div className="small">
      <code>
        {request.method} {request.url}
      </code>
      {Object.keys(request.headers).length > 0 && (
        <div className="muted">
          {Object.entries(request.headers).map(([h, v]) => (
            <div key={h}>
              {h}: {v}
            </div>
          ))}
        </div>
      )}
      {request.body !== undefined && <pre className="preview-code">{JSON.stringify(request.body, null, 2)}</pre>}
    </div>
  );
}

function Detail({ detail, gaps }: { detail: StepDetail; gaps: Set<string> }): ReactNode {
  switch (detail.kind) {
    case "send_email":
      return <Email email={detail.email} gaps={gaps} />;
    case "crm_upsert":
    case "http_request":
      return <Call request={detail.request} />;
    case "model_draft":
      return (
        <div className="small">
          <div className="muted">Prompt</div>
          <div className="preview-email-body">
            <Marked text={detail.prompt} gaps={gaps} />
          </div>
        </div>
      );
    case "wait":
      return (
        <ul className="small preview-instants">
          {detail.instants.map((t, i) => (
            <li key={t.at}>
              {i === 0 ? "Goes on " : "Next after that: "}
              {t.local} · <span className="muted">{t.at.replace("T", " ").replace(/:00\.000Z$/, " UTC")}</span>
              {t.clockChange && <div className="muted">{t.clockChange}</div>}
            </li>
          ))}
        </ul>
      );
    case "branch":
      return (
        <div className="small">
          If {detail.condition}: <strong>{detail.result ? "yes" : "no"}</strong>
          <ul className="muted">
            {detail.why.map((w) => (
              <li key={w}>{w}</li>
            ))}
          </ul>
        </div>
      );
    case "split":
      return (
        <div className="small">
          Path <strong>{detail.path}</strong> (weights {detail.weights}); a contact always takes the same path.
        </div>
      );
    case "approval":
      return (
        <div className="small">
          <div>
            <strong>
              <Marked text={detail.title} gaps={gaps} />
            </strong>
          </div>
          {detail.content && (
            <div className="preview-email-body">
              <Marked text={detail.content} gaps={gaps} />
            </div>
          )}
          {detail.email && <div className="muted">They are shown the email below, exactly as it would be sent.</div>}
        </div>
      );
    case "wait_for_reply":
      return (
        <div className="small muted">
          Deadline: {detail.deadline.local} · {detail.deadline.at.replace("T", " ").replace(/:00\.000Z$/, " UTC")}
        </div>
      );
    default:
      return null;
  }
}
