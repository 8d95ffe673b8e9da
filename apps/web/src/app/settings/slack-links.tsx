"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { reloadAfterWrite, useTRPC } from "../../server/trpc/client";
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
          {list.data?.map((m) => {
            const formId = `slack-${m.userId}`;
            return (
              <tr key={m.userId}>
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
                        await attempt(async () => {
                          if (v && !/^[UW][A-Z0-9]{2,20}$/.test(v)) throw new Error(`"${v}" is not a Slack member id: it starts with U (or W) and looks like U012AB3CD.`);
                          await set.mutateAsync({ orgSlug, userId: m.userId, slackUserId: v || null });
                          await reloadAfterWrite(qc, trpc.members.list.queryKey({ orgSlug }));
                          return v ? `${m.name} is linked to the Slack user ${v}.` : `${m.name} is no longer linked to a Slack user.`;
                        });
                      }}
                    >
                      <SubmitButton pending={set.isPending}>Save</SubmitButton>
                      {m.slackUserId && (
                        <button
                          type="button"
                          onClick={async () => {
                            await attempt(async () => {
                              await set.mutateAsync({ orgSlug, userId: m.userId, slackUserId: null });
                              await reloadAfterWrite(qc, trpc.members.list.queryKey({ orgSlug }));
                              return `${m.name} is no longer linked to a Slack user.`;
                            });
                          }}
                        >
                          Unlink
                        </button>
                      )}
                    </form>
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </section>
  );
}
