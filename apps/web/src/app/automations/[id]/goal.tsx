"use client";

import { type Goal, goalWords } from "@holdfast/core/status-words";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { reloadAfterWrite, useTRPC } from "../../../server/trpc/client";
import { percent } from "../../percent";
import { type CredentialKind, NewCredentialButton, PreviousCredentials, useCredentialActions } from "./trigger-credential";

/** The choices in a marketer's words: what counts as this journey's success. */
const choices: { value: Goal | "none"; label: string }[] = [
  { value: "none", label: "No goal" },
  { value: "replied", label: "The contact replies to one of its emails" },
  { value: "clicked", label: "The contact clicks a link in one of its emails" },
  { value: "event", label: "A goal event arrives for the contact (for example \u201cbecame a customer\u201d from your CRM)" },
];

/**
 * The automation's goal: what it is (a form for owners and editors), the goal URL when it is a goal event, and the
 * conversion rate per version (converted runs / started runs). The goal belongs to the automation, not to a version:
 * changing it applies at once to the runs in flight and needs no publish.
 */
export function GoalPanel({ orgSlug, automationId, canEdit }: { orgSlug: string; automationId: string; canEdit: boolean }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const state = useQuery(trpc.goals.get.queryOptions({ orgSlug, automationId }));
  const set = useMutation(trpc.goals.set.mutationOptions());
  const [choice, setChoice] = useState<Goal | "none" | null>(null);
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  if (state.isPending) return <p className="muted small">Loading the goal…</p>;
  if (state.isError) return <p className="flash flash-error">{state.error.message}</p>;
  const g = state.data;
  const current: Goal | "none" = g.goal ?? "none";
  const chosen = choice ?? current;
  const save = async () => {
    setMessage(null);
    try {
      await set.mutateAsync({ orgSlug, automationId, goal: chosen === "none" ? null : chosen });
      setMessage({ ok: true, text: chosen === "none" ? "Saved: this automation has no goal." : `Saved: a run converts when ${goalWords[chosen]}.` });
      setChoice(null);
    } catch (err) {
      setMessage({ ok: false, text: `Not saved: ${(err as Error).message}` });
    }
    await reloadAfterWrite(queryClient, trpc.goals.get.queryKey({ orgSlug, automationId }));
  };
  return (
    <details className="card goal-panel" data-goal={current}>
      <summary>
        Goal: {g.goal ? goalWords[g.goal] : "none"}
        {g.goal && g.versions[0] ? ` \u00b7 converted ${percent(g.versions[0].converted, g.versions[0].started)} on version ${g.versions[0].version}` : ""}
      </summary>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void save();
        }}
      >
        <fieldset disabled={!canEdit || set.isPending}>
          <legend>What counts as this journey&apos;s success?</legend>
          {choices.map((c) => (
            <label key={c.value} className="row">
              <input type="radio" name="goal" value={c.value} checked={chosen === c.value} onChange={() => setChoice(c.value)} /> {c.label}
            </label>
          ))}
          <p className="small muted">
            When the goal is met, the contact&apos;s runs of this automation stop and count as converted: a run waiting stops at once, one whose email is
            being sent stops once the send is done. The goal belongs to the automation, so a change counts at once for the runs already going, with no new
            version.
          </p>
          {canEdit && <button type="submit">Save goal</button>}
        </fieldset>
      </form>
      {message && (
        <p className={`flash ${message.ok ? "flash-ok" : "flash-error"}`} role={message.ok ? "status" : "alert"}>
          {message.text}
        </p>
      )}
      {g.goal === "event" && <GoalUrl orgSlug={orgSlug} automationId={automationId} canEdit={canEdit} url={g.url} mode={g.mode} credential={g.credential} />}
      <ConversionTable versions={g.versions} />
    </details>
  );
}

type GoalCredential = { signingSecret: string | null; urlToken: string | null; previous: { kind: CredentialKind; expiresAt: Date | string }[] };

/**
 * The goal URL and, for owners and editors, its secret: renewed as the start trigger's is (the previous one is
 * accepted for 24 hours, or stopped at once after a leak).
 */
function GoalUrl(props: { orgSlug: string; automationId: string; canEdit: boolean; url: string | null; mode: "signed" | "url_token"; credential: GoalCredential | null }) {
  const { url, mode, credential, canEdit } = props;
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const input = { orgSlug: props.orgSlug, automationId: props.automationId };
  const refresh = () => reloadAfterWrite(queryClient, trpc.goals.get.queryKey(input));
  const rotate = useMutation(trpc.goals.rotate.mutationOptions({ onSuccess: refresh }));
  const revoke = useMutation(trpc.goals.revokePrevious.mutationOptions({ onSuccess: refresh }));
  const { note, doRotate, doRevoke } = useCredentialActions({
    rotate: (kind) => rotate.mutateAsync({ ...input, kind }),
    revoke: (kind) => revoke.mutateAsync({ ...input, kind }),
  });
  const error = rotate.error ?? revoke.error;
  return (
    <div className="goal-url">
      <p className="small">
        Send goal events to <code data-goal-url="1">{url ?? "(set the goal to a goal event first)"}</code> with the contact&apos;s email where the trigger&apos;s
        payload has it, for example <code>{'{"email": "maya@example.com"}'}</code>. A goal event starts no run; sending the same event twice (same
        webhook-id) changes nothing.
      </p>
      {credential && mode === "signed" && (
        <label>
          Goal signing secret (its own: it cannot start runs)
          <input name="goal-secret" readOnly type="password" value={credential.signingSecret ?? ""} onFocus={(e) => e.target.select()} />
        </label>
      )}
      {mode === "url_token" && <p className="small muted">Anyone with this URL can mark contacts converted: share it only with the tool that sends goal events.</p>}
      {credential && canEdit && (
        <div className="row">
          <NewCredentialButton kind={mode === "signed" ? "signing_secret" : "url_token"} disabled={rotate.isPending} rotate={(kind) => void doRotate(kind).catch(() => {})} />
        </div>
      )}
      {credential && credential.previous.length > 0 && (
        <PreviousCredentials previous={credential.previous} canEdit={canEdit} revoke={(kind) => void doRevoke(kind).catch(() => {})} revoking={revoke.isPending} />
      )}
      {error && <p className="field-error">{error.message}</p>}
      {note && (
        <p className="small" role="status">
          {note}
        </p>
      )}
    </div>
  );
}

function ConversionTable({ versions }: { versions: { version: number; started: number; converted: number }[] }) {
  if (versions.length === 0) return <p className="small muted">Conversion per version appears once a version is published.</p>;
  return (
    <table className="conversion" aria-label="Conversion rate per version">
      <thead>
        <tr>
          <th scope="col">Version</th>
          <th scope="col">Runs started</th>
          <th scope="col">Converted</th>
          <th scope="col">Conversion rate</th>
        </tr>
      </thead>
      <tbody>
        {versions.map((v) => (
          <tr key={v.version} data-version={v.version}>
            <td>{v.version}</td>
            <td>{v.started}</td>
            <td>{v.converted}</td>
            <td data-rate="1">{percent(v.converted, v.started)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
