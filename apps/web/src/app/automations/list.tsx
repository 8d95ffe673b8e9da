"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useState } from "react";
import { reloadAfterWrite, useTRPC } from "../../server/trpc/client";
import { AutomationRow } from "./list-row";
import { NewAutomationForm } from "./new-automation";

/**
 * The automations list: a new automation's name (owners and editors), then each automation with its status and
 * quick lifecycle buttons (list-row.tsx); archived ones only on request.
 */
export function AutomationList({ orgSlug, canEdit }: { orgSlug: string; canEdit: boolean }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const list = useQuery(trpc.automations.list.queryOptions({ orgSlug }));
  const statuses = useQuery(trpc.lifecycle.statuses.queryOptions({ orgSlug }));
  const change = useMutation(trpc.lifecycle.change.mutationOptions());
  const [showArchived, setShowArchived] = useState(false);
  const [flash, setFlash] = useState<{ ok: boolean; text: string } | null>(null);
  const statusOf = new Map((statuses.data ?? []).map((s) => [s.id, s]));
  const act = async (automationId: string, name: string, c: Parameters<typeof change.mutateAsync>[0]["change"], done: string) => {
    setFlash(null);
    try {
      const out = await change.mutateAsync({ orgSlug, automationId, change: c });
      setFlash({ ok: true, text: out.changed ? `${name}: ${done}` : `${name} already was that way.` });
    } catch (err) {
      setFlash({ ok: false, text: `Not done: ${(err as Error).message}` });
    }
    await reloadAfterWrite(queryClient, trpc.lifecycle.statuses.queryKey({ orgSlug }));
  };
  return (
    <>
      {canEdit && (
        <div className="new-automation">
          <NewAutomationForm orgSlug={orgSlug} />
          <Link className="button-link" href={`/automations/templates?org=${orgSlug}`}>
            New automation from a template
          </Link>
        </div>
      )}
      {flash && (
        <p className={`flash ${flash.ok ? "flash-ok" : "flash-error"}`} role={flash.ok ? "status" : "alert"}>
          {flash.text}
        </p>
      )}
      {list.isPending ? (
        <p className="muted">Loading…</p>
      ) : list.isError ? (
        <p className="flash flash-error">{list.error.message}</p>
      ) : list.data.length === 0 ? (
        <p className="empty muted">No automations yet{canEdit ? ": name one above to start drawing it, or start from a template." : "."}</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th>Automation</th>
              <th>Status</th>
              <th>Latest version</th>
              <th>Runs in flight</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {list.data
              .filter((a) => showArchived || statusOf.get(a.id)?.status !== "archived")
              .map((a) => (
                <AutomationRow key={a.id} a={a} st={statusOf.get(a.id)} orgSlug={orgSlug} canEdit={canEdit} act={act} />
              ))}
          </tbody>
        </table>
      )}
      {(statuses.data ?? []).some((x) => x.status === "archived") && (
        <label className="small muted">
          <input type="checkbox" checked={showArchived} onChange={(e) => setShowArchived(e.target.checked)} /> Show archived automations
        </label>
      )}
    </>
  );
}
