"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { inferRouterOutputs } from "@trpc/server";
import { reloadAfterWrite, useTRPC } from "../../server/trpc/client";
import type { AppRouter } from "../../server/trpc/router";
import { SubmitButton } from "../submit-button";
import { useFlash } from "./flash";

/**
 * Members' Slack users: a Slack approval click decides as the member linked to the clicking Slack user, so each
 * approver needs their Slack member id here (Slack: profile -> ⋯ -> Copy member ID, e.g. U012AB3CD). Owners set them.
 */
export function SlackLinks({ orgSlug, canEdit }: { orgSlug: string; canEdit: boolean }) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const list = useQuery(trpc.members.list.queryOptions({ orgSlug }));
  const set = useMutation(trpc.members.setSlackUser.mutationOptions());
  const { attempt, view } = useFlash();
  const link = async (m: Member, slackUserId: string | null, said: string) =>
    attempt(async () => {
      await set.mutateAsync({ orgSlug, userId: m.userId, slackUserId });
      await reloadAfterWrite(qc, trpc.members.list.queryKey({ orgSlug }));
      return said;
    });
  return (
    <section className="slack-links">
      <h2>Slack users of members</h2>
      <p className="small muted" style={{ marginTop: 0 }}>
        Approvals posted to Slack are decided as the member linked to whoever clicks. A click from a Slack user linked to nobody is refused. Find a member id
        in Slack under the person's profile, ⋯, Copy member ID (it looks like U012AB3CD).
      </p>
      {view}
      <table>
        <thead>
          <tr>
            <th>Member</th>
            <th>Role</th>
            <th>Slack member id</th>
            <th>
              <span className="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {list.data?.map((m) => (
            <SlackLinkRow key={m.userId} m={m} canEdit={canEdit} pending={set.isPending} attempt={attempt} link={link} />
          ))}
        </tbody>
      </table>
    </section>
  );
}

type Member = inferRouterOutputs<AppRouter>["members"]["list"][number];

/** A member's Slack member id: its input is outside the row's form (a form cannot span table cells), joined by `form`. */
function SlackLinkRow({
  m,
  canEdit,
  pending,
  attempt,
  link,
}: {
  m: Member;
  canEdit: boolean;
  pending: boolean;
  attempt: ReturnType<typeof useFlash>["attempt"];
  link: (m: Member, slackUserId: string | null, said: string) => Promise<boolean>;
}) {
  const formId = `slack-${m.userId}`;
  return (
    <tr>
      <td>
        {m.name} <span className="muted small">{m.email}</span>
      </td>
      <td>{m.role}</td>
      <td>
        {canEdit ? (
          <input form={formId} name="slack" aria-label={`Slack member id of ${m.name}`} defaultValue={m.slackUserId ?? ""} key={m.slackUserId ?? ""} placeholder="U012AB3CD" size={14} />
        ) : (
          (m.slackUserId ?? <span className="muted">not linked</span>)
        )}
      </td>
      <td>
        {canEdit && (
          <form
            id={formId}
            className="row-inline"
            onSubmit={async (e) => {
              e.preventDefault();
              const v = (e.currentTarget.ownerDocument.querySelector(`input[form="${formId}"]`) as HTMLInputElement).value.trim().toUpperCase();
              if (v && !/^[UW][A-Z0-9]{2,20}$/.test(v)) {
                await attempt(async () => {
                  throw new Error(`"${v}" is not a Slack member id: it starts with U (or W) and looks like U012AB3CD.`);
                });
                return;
              }
              await link(m, v || null, v ? `${m.name} is linked to the Slack user ${v}.` : `${m.name} is no longer linked to a Slack user.`);
            }}
          >
            <SubmitButton pending={pending}>Save</SubmitButton>
            {m.slackUserId && (
              <button type="button" onClick={() => link(m, null, `${m.name} is no longer linked to a Slack user.`)}>
                Unlink
              </button>
            )}
          </form>
        )}
      </td>
    </tr>
  );
}
