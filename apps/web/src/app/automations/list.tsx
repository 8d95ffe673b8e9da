"use client";

import { heldWords } from "@holdfast/core/status-words";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { reloadAfterWrite, useTRPC } from "../../server/trpc/client";
import { SubmitButton } from "../submit-button";
import { draftWords, LifecycleBadge, shownStatus } from "./[id]/lifecycle";

export function AutomationList({ orgSlug, canEdit }: { orgSlug: string; canEdit: boolean }) {
  const trpc = useTRPC();
  const router = useRouter();
  const queryClient = useQueryClient();
  const list = useQuery(trpc.automations.list.queryOptions({ orgSlug }));
  const create = useMutation(trpc.automations.create.mutationOptions());
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
              await reloadAfterWrite(queryClient, trpc.automations.list.queryKey({ orgSlug }));
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
          <SubmitButton className="primary" pending={create.isPending} disabled={!slug}>
            Create
          </SubmitButton>
          {slug && <span className="small muted">webhook: /api/hooks/{orgSlug}/{slug}</span>}
          {error && <span className="field-error">{error}</span>}
        </form>
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
        <p className="empty muted">No automations yet{canEdit ? ": name one above to start drawing it." : "."}</p>
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
              .map((a) => {
                const st = statusOf.get(a.id);
                const status = st?.status ?? "active";
                return (
              <tr key={a.id} data-automation={a.slug} data-status={status}>
                <td>
                  <Link href={`/automations/${a.id}?org=${orgSlug}`}>{a.name}</Link> <span className="muted small">{a.slug}</span>
                </td>
                <td>
                  <LifecycleBadge
                    status={shownStatus(status, st?.published)}
                    title={shownStatus(status, st?.published) === "draft" ? draftWords : status === "paused" ? `deliveries: ${st?.pauseMode === "hold" ? "accepted and held" : "refused with 503, retried later"}; running runs: ${st?.pauseRuns === "hold" ? "held" : "continue"}` : undefined}
                  />{" "}
                  {canEdit && status === "active" && (
                    <button type="button" className="small" onClick={() => act(a.id, a.name, { action: "pause", mode: "refuse", runs: "continue" }, "paused (new deliveries are refused with 503 and Retry-After, so senders retry later; running runs continue). The editor has the other pause choices.")}>
                      Pause
                    </button>
                  )}
                  {canEdit && status === "paused" && (
                    <button type="button" className="small" onClick={() => act(a.id, a.name, { action: "resume" }, "resumed: deliveries start runs again and held runs go on.")}>
                      Resume
                    </button>
                  )}
                  {canEdit && status !== "archived" && (
                    <button
                      type="button"
                      className="small"
                      onClick={() => {
                        if (window.confirm(`Archive ${a.name}? Deliveries are refused (410) and its editor becomes read-only; runs already going continue. You can restore it.`)) {
                          void act(a.id, a.name, { action: "archive" }, "archived (hidden from this list; Show archived brings it back).");
                        }
                      }}
                    >
                      Archive
                    </button>
                  )}
                  {canEdit && status === "archived" && (
                    <button type="button" className="small" onClick={() => act(a.id, a.name, { action: "restore" }, "restored: active again.")}>
                      Restore
                    </button>
                  )}
                </td>
                <td>{a.latest ? `v${a.latest}` : <span className="muted">draft only</span>}</td>
                <td data-running={a.running}>
                  {a.running}
                  {a.held > 0 && <div className="small warn" data-held={a.held}>{`${a.held} ${heldWords.replace(/^Held/, "held")}`}</div>}
                </td>
                <td>
                  <Link href={`/automations/${a.id}/versions?org=${orgSlug}`}>Versions</Link>
                </td>
              </tr>
                );
              })}
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
