"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { reloadAfterWrite, useTRPC } from "../../server/trpc/client";
import { Invitations, plainError, type Role, roles } from "./invitations";

/**
 * Members and their roles, and the owner's invitations. An owner invites an address with a role; with a system mailbox
 * (`invitesByEmail`) Holdfast emails the person a link the owner never sees, otherwise the owner gets the link to send
 * (shown once: only its hash is kept). The person becomes a member when they accept it, and is listed here then.
 * Pending invitations are listed apart, with where their email is, Send again (or New link) and Revoke.
 */
export function Members({ orgSlug, canEdit, invitesByEmail }: { orgSlug: string; canEdit: boolean; invitesByEmail: boolean }) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const list = useQuery(trpc.members.list.queryOptions({ orgSlug }));
  const setRole = useMutation(trpc.members.setRole.mutationOptions());
  const remove = useMutation(trpc.members.remove.mutationOptions());
  const [error, setError] = useState<string | null>(null);
  const refresh = () => reloadAfterWrite(qc, trpc.members.list.queryKey({ orgSlug }));
  const act = (work: () => Promise<unknown>) => async () => {
    setError(null);
    try {
      await work();
      await refresh();
    } catch (err) {
      setError(plainError(err));
    }
  };
  return (
    <section>
      <h2>Members and roles</h2>
      <table>
        <thead>
          <tr>
            <th>Name</th>
            <th>Email</th>
            <th>Role</th>
            <th>Slack user</th>
            <th>
              <span className="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {list.data?.map((m) => (
            <tr key={m.userId}>
              <td>{m.name}</td>
              <td>{m.email}</td>
              <td>
                {canEdit ? (
                  <select aria-label={`Role of ${m.name || m.email}`} value={m.role} onChange={(e) => act(() => setRole.mutateAsync({ orgSlug, userId: m.userId, role: e.target.value as Role }))()}>
                    {roles.map((r) => (
                      <option key={r} value={r}>
                        {r}
                      </option>
                    ))}
                  </select>
                ) : (
                  m.role
                )}
              </td>
              <td>{m.slackUserId ?? <span className="muted">-</span>}</td>
              <td>
                {canEdit && (
                  <button type="button" onClick={act(() => remove.mutateAsync({ orgSlug, userId: m.userId }))}>
                    Remove
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {error && <p className="field-error">{error}</p>}
      {canEdit && <Invitations orgSlug={orgSlug} byEmail={invitesByEmail} />}
    </section>
  );
}
