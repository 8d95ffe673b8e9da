"use client";

import { useState } from "react";

export type CredentialKind = "signing_secret" | "url_token";
type Credential = { signingSecret: string; previous: { kind: CredentialKind; expiresAt: Date | string }[] };

/**
 * The trigger's credential for owners and editors: copy the URL, a new URL (token mode) or the signing secret to show,
 * copy or renew (signed mode), and until when the previous ones still work.
 */
export function TriggerCredential(props: {
  t: { mode: "signed" | "url_token"; url: string; credential: Credential };
  canEdit: boolean;
  copy: (text: string, what: string) => void;
  rotate: (kind: CredentialKind) => void;
  rotating: boolean;
  revoke: (kind: CredentialKind) => void;
  revoking: boolean;
}) {
  const { t, canEdit, copy, rotate } = props;
  const [shown, setShown] = useState(false);
  return (
    <>
      <div className="row">
        <button type="button" onClick={() => copy(t.url, "URL")}>
          Copy URL
        </button>
        {t.mode === "url_token" && (
          <button type="button" disabled={!canEdit || props.rotating} onClick={() => rotate("url_token")}>
            New URL…
          </button>
        )}
      </div>
      {t.mode === "url_token" && <p className="small muted">Anyone with this URL can start runs: share it only with the form tool.</p>}
      {t.mode === "signed" && (
        <>
          <label>
            Signing secret
            <input name="trigger-secret" readOnly type={shown ? "text" : "password"} value={t.credential.signingSecret} onFocus={(e) => e.target.select()} />
          </label>
          <div className="row">
            <button type="button" onClick={() => setShown((s) => !s)}>
              {shown ? "Hide" : "Show"}
            </button>
            <button type="button" onClick={() => copy(t.credential?.signingSecret ?? "", "Secret")}>
              Copy secret
            </button>
            <button type="button" disabled={!canEdit || props.rotating} onClick={() => rotate("signing_secret")}>
              New secret…
            </button>
          </div>
          <p className="small muted">Requests must carry webhook-id, webhook-timestamp and webhook-signature headers signed with this secret.</p>
        </>
      )}
      {t.credential.previous.length > 0 && <PreviousCredentials previous={t.credential.previous} canEdit={canEdit} revoke={props.revoke} revoking={props.revoking} />}
    </>
  );
}

/** The previous secret or URL, accepted for 24 hours after a renewal, and a way to stop accepting it now. */
function PreviousCredentials({ previous, canEdit, revoke, revoking }: { previous: Credential["previous"]; canEdit: boolean; revoke: (kind: CredentialKind) => void; revoking: boolean }) {
  return (
    <p className="small muted">
      {previous.map((p) => (
        <span key={`${p.kind}${String(p.expiresAt)}`}>
          The previous {p.kind === "signing_secret" ? "secret" : "URL"} works until {new Date(p.expiresAt).toLocaleString()}.{" "}
          {canEdit && (
            <button type="button" className="link" disabled={revoking} onClick={() => revoke(p.kind)}>
              Stop accepting it now
            </button>
          )}{" "}
        </span>
      ))}
    </p>
  );
}
