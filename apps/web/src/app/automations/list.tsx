"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { useTRPC } from "../../server/trpc/client";

export function AutomationList({ orgSlug, canEdit }: { orgSlug: string; canEdit: boolean }) {
  const trpc = useTRPC();
  const router = useRouter();
  const queryClient = useQueryClient();
  const list = useQuery(trpc.automations.list.queryOptions({ orgSlug }));
  const create = useMutation(trpc.automations.create.mutationOptions());
  const [name, setName] = useState("");
  const [error, setError] = useState<string | null>(null);
  const slug = name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-|-$/g, "")
    .slice(0, 60);
  return (
    <>
      {canEdit && (
        <form
          className="filters"
          onSubmit={async (e) => {
            e.preventDefault();
            setError(null);
            try {
              const { id } = await create.mutateAsync({ orgSlug, name: name.trim(), slug });
              await queryClient.invalidateQueries({ queryKey: trpc.automations.list.queryKey({ orgSlug }) });
              router.push(`/automations/${id}?org=${orgSlug}`);
            } catch (err) {
              setError((err as Error).message);
            }
          }}
        >
          <label>
            New automation
            <input name="automation-name" value={name} onChange={(e) => setName(e.target.value)} placeholder="Trial follow-up" required maxLength={200} />
          </label>
          <button type="submit" className="primary" disabled={!slug || create.isPending}>
            Create
          </button>
          {slug && <span className="small muted">webhook: /api/hooks/{orgSlug}/{slug}</span>}
          {error && <span className="field-error">{error}</span>}
        </form>
      )}
      {list.isPending ? (
        <p className="muted">Loading…</p>
      ) : list.isError ? (
        <p className="flash flash-error">{list.error.message}</p>
      ) : list.data.length === 0 ? (
        <p className="empty muted">No automations yet{canEdit ? ": name one above to start drawing it." : "."}</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th>Automation</th>
              <th>Latest version</th>
              <th>Runs in flight</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {list.data.map((a) => (
              <tr key={a.id} data-automation={a.slug}>
                <td>
                  <Link href={`/automations/${a.id}?org=${orgSlug}`}>{a.name}</Link> <span className="muted small">{a.slug}</span>
                </td>
                <td>{a.latest ? `v${a.latest}` : <span className="muted">draft only</span>}</td>
                <td>{a.running}</td>
                <td>
                  <Link href={`/automations/${a.id}/versions?org=${orgSlug}`}>Versions</Link>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}
