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
          <NewCredentialButton kind="url_token" disabled={!canEdit || props.rotating} rotate={rotate} />
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
            <NewCredentialButton kind="signing_secret" disabled={!canEdit || props.rotating} rotate={rotate} />
          </div>
          <p className="small muted">Requests must carry webhook-id, webhook-timestamp and webhook-signature headers signed with this secret.</p>
        </>
      )}
      {t.credential.previous.length > 0 && <PreviousCredentials previous={t.credential.previous} canEdit={canEdit} revoke={props.revoke} revoking={props.revoking} />}
    </>
  );
}

/** Makes a new secret or URL: the start trigger's and the goal URL's. */
export function NewCredentialButton({ kind, disabled, rotate }: { kind: CredentialKind; disabled: boolean; rotate: (kind: CredentialKind) => void }) {
  return (
    <button type="button" disabled={disabled} onClick={() => rotate(kind)}>
      {kind === "signing_secret" ? "New secret…" : "New URL…"}
    </button>
  );
}

/**
 * Asks before making a new credential or stopping the previous one, and says what happened: the start trigger's panel
 * and the goal URL share it. A repeated "stop accepting" revokes nothing and says so.
 */
export function useCredentialActions(m: { rotate: (kind: CredentialKind) => Promise<unknown>; revoke: (kind: CredentialKind) => Promise<{ revoked: number }> }) {
  const [note, setNote] = useState<string | null>(null);
  const doRotate = async (kind: CredentialKind) => {
    const what = kind === "signing_secret" ? "signing secret" : "URL";
    if (!window.confirm(`Make a new ${what}? The current one keeps working for 24 hours, so you can update the sender.`)) return;
    await m.rotate(kind);
    setNote(`New ${what} made. The previous one is accepted for 24 more hours.`);
  };
  const doRevoke = async (kind: CredentialKind) => {
    if (!window.confirm("Stop accepting it now? Senders still using it will be refused.")) return;
    const { revoked } = await m.revoke(kind);
    const what = kind === "signing_secret" ? "secret" : "URL";
    setNote(revoked > 0 ? `The previous ${what} no longer works.` : `The previous ${what} already no longer worked: nothing changed.`);
  };
  return { note, setNote, doRotate, doRevoke };
}

/** The previous secret or URL, accepted for 24 hours after a renewal, and a way to stop accepting it now. */
export function PreviousCredentials({ previous, canEdit, revoke, revoking }: { previous: Credential["previous"]; canEdit: boolean; revoke: (kind: CredentialKind) => void; revoking: boolean }) {
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
