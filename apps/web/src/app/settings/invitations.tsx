"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { inferRouterOutputs } from "@trpc/server";
import { type FormEvent, useState } from "react";
import { reloadAfterWrite, useTRPC } from "../../server/trpc/client";
import type { AppRouter } from "../../server/trpc/router";
import { SubmitButton } from "../submit-button";

export const roles = ["owner", "editor", "approver", "viewer"] as const;
export type Role = (typeof roles)[number];

/** A tRPC error in words: the first field problem when the input was refused, else the server's sentence. */
export function plainError(error: unknown): string {
  const e = error as { message?: string; data?: { issues?: { message: string }[] } };
  return e.data?.issues?.[0]?.message ?? e.message ?? "That did not work: try again.";
}

/** "an editor", "a viewer". */
const withArticle = (role: string) => `${/^[aeiou]/.test(role) ? "an" : "a"} ${role}`;

type Made = { delivery: "email"; email: string; expiresAt: Date } | { delivery: "link"; email: string; role: Role; link: string; expiresAt: Date };
type Pending = inferRouterOutputs<AppRouter>["members"]["invitations"][number];

/** The invite form, what the invitation just made became (emailed, or its link once), and the pending invitations. */
export function Invitations({ orgSlug, byEmail }: { orgSlug: string; byEmail: boolean }) {
  const trpc = useTRPC();
  const pendingList = useQuery(trpc.members.invitations.queryOptions({ orgSlug }));
  const inv = useInvitationWrites(orgSlug);
  const submit = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    if (inv.inviting) return;
    const form = e.currentTarget;
    const get = (name: string) => (form.elements.namedItem(name) as HTMLInputElement | null)?.value ?? "";
    if (await inv.send(get("email"), get("role") as Role)) form.reset();
  };

  return (
    <div className="invitations">
      <form className="filters" onSubmit={submit} aria-label="invite a member">
        <label>
          Email
          <input name="email" type="email" required maxLength={320} />
        </label>
        <label>
          Role
          <select name="role" defaultValue="viewer">
            {[...roles].reverse().map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
        </label>
        <SubmitButton pending={inv.inviting}>Invite</SubmitButton>
        {inv.error && <span className="field-error">{inv.error}</span>}
      </form>
      <p className="small muted">
        {byEmail
          ? "Holdfast emails them a link; they join when they accept it (a new person chooses their name and password then). Nobody else sees the link, you included."
          : "They join when they accept the invitation's link; a new person chooses their name and password then. This deployment has no email for invitations: you get the link to send them yourself."}
      </p>
      <MadeNotice made={inv.made} copied={inv.copied} onCopied={() => inv.setCopied(true)} />
      <h3>Pending invitations</h3>
      {pendingList.data?.length === 0 ? (
        <p className="empty muted">No pending invitations.</p>
      ) : (
        <PendingInvitations rows={pendingList.data} byEmail={byEmail} inv={inv} />
      )}
    </div>
  );
}

/** Invite (or send again), and Revoke, with what the last invitation became and the error of the last try. */
function useInvitationWrites(orgSlug: string) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const invite = useMutation(trpc.members.invite.mutationOptions());
  const revoke = useMutation(trpc.members.revokeInvitation.mutationOptions());
  const [made, setMade] = useState<Made | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [copied, setCopied] = useState(false);
  const refresh = () => reloadAfterWrite(qc, trpc.members.invitations.queryKey({ orgSlug }));

  const send = async (email: string, role: Role) => {
    setError(null);
    setMade(null);
    setCopied(false);
    try {
      const answer = await invite.mutateAsync({ orgSlug, email, role });
      const expiresAt = new Date(answer.expiresAt);
      setMade(answer.delivery === "email" ? { delivery: "email", email: answer.sentTo, expiresAt } : { delivery: "link", email, role, link: answer.link, expiresAt });
      await refresh();
      return true;
    } catch (err) {
      setError(plainError(err));
      return false;
    }
  };
  const doRevoke = async (id: string, email: string) => {
    if (!window.confirm(`Revoke the invitation for ${email}? Its link stops working.`)) return;
    setError(null);
    try {
      await revoke.mutateAsync({ orgSlug, invitationId: id });
      if (made?.email.toLowerCase() === email.toLowerCase()) setMade(null);
    } catch (err) {
      setError(plainError(err));
    }
    await refresh();
  };
  return { send, doRevoke, made, error, copied, setCopied, inviting: invite.isPending, revoking: revoke.isPending };
}

/** What the invitation just made became: emailed, or its link, shown once. */
function MadeNotice({ made, copied, onCopied }: { made: Made | null; copied: boolean; onCopied: () => void }) {
  if (made?.delivery === "email") {
    return (
      <p className="small ok-note" role="status">
        Invitation for {made.email} made: Holdfast emails them a link that works once, for 7 days (until {made.expiresAt.toLocaleString()}). Its
        state is in the list below.
      </p>
    );
  }
  if (made?.delivery !== "link") return null;
  return (
    <div className="stack invitation-link" role="status">
      <p className="small ok-note">
        Invitation for {made.email} made. This deployment has no email for invitations, so send this link to them yourself. Whoever opens it can
        join as {withArticle(made.role)} (and make the account for this address if it has none), so send it to them only. It works once, for 7
        days (until {made.expiresAt.toLocaleString()}). It is shown only now: if it is lost, make a new one.
      </p>
      <div className="row-inline">
        <input name="invitation-link" readOnly value={made.link} onFocus={(e) => e.target.select()} aria-label="Invitation link" size={60} />
        <button
          type="button"
          onClick={async () => {
            await navigator.clipboard?.writeText(made.link).catch(() => {});
            onCopied();
          }}
        >
          {copied ? "Copied" : "Copy link"}
        </button>
      </div>
    </div>
  );
}

function PendingInvitations({ rows, byEmail, inv }: { rows: Pending[] | undefined; byEmail: boolean; inv: ReturnType<typeof useInvitationWrites> }) {
  return (
    <table>
      <thead>
        <tr>
          <th>Email</th>
          <th>Role</th>
          <th>Expires</th>
          {byEmail && <th>Delivery</th>}
          <th>
            <span className="sr-only">Actions</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {rows?.map((i) => (
          <tr key={i.id}>
            <td>{i.email}</td>
            <td>{i.role}</td>
            <td>{i.expired ? <span className="muted">expired {new Date(i.expiresAt).toLocaleDateString()}</span> : new Date(i.expiresAt).toLocaleString()}</td>
            {byEmail && (
              <td className="invitation-email">
                <EmailState state={i.emailState} />
              </td>
            )}
            <td className="row-inline">
              {byEmail ? (
                <button type="button" disabled={inv.inviting} onClick={() => inv.send(i.email, i.role)} aria-label={`Send again: the invitation for ${i.email}`}>
                  Send again
                </button>
              ) : (
                <button type="button" disabled={inv.inviting} onClick={() => inv.send(i.email, i.role)} aria-label={`New link for ${i.email}`}>
                  New link
                </button>
              )}
              <button type="button" disabled={inv.revoking} onClick={() => inv.doRevoke(i.id, i.email)} aria-label={`Revoke the invitation for ${i.email}`}>
                Revoke
              </button>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

type EmailStateView = { kind: "sent"; at: string | Date | null } | { kind: "sending" } | { kind: "retrying" | "failed"; reason: string } | null;

/** Where an invitation's email is, in words (the reasons come from core, never a mail library's message). */
function EmailState({ state }: { state: EmailStateView }) {
  if (state === null) return <span className="muted">link shown to you</span>;
  switch (state.kind) {
    case "sent":
      return <span>Emailed{state.at ? ` ${new Date(state.at).toLocaleString()}` : ""}</span>;
    case "sending":
      return <span className="muted">Being sent</span>;
    case "retrying":
      return <span className="muted">Not sent yet, trying again: {state.reason}</span>;
    case "failed":
      return <span className="field-error">Not sent: {state.reason} Send again to try once more.</span>;
  }
}
