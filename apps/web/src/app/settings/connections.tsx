"use client";

import { connectionKind, connectionKinds, type ConnectionKindModule } from "@holdfast/core/kinds";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { inferRouterOutputs } from "@trpc/server";
import { useState } from "react";
import { reloadAfterWrite, useTRPC } from "../../server/trpc/client";
import type { AppRouter } from "../../server/trpc/router";
import { ConnectionForm, type SavedConnection } from "./connection-form";

/**
 * Settings -> Connections: the organisation's accounts (mailbox, model, CRM, Slack, HTTP APIs) with their status and
 * the published versions that use them; "Add connection" picks a kind and opens its form; Edit, rename and Delete
 * (refused, with the versions named, while a published version uses the connection). Secrets are write-only.
 */
type Open = { mode: "closed" } | { mode: "pick" } | { mode: "new"; kind: ConnectionKindModule } | { mode: "edit"; kind: ConnectionKindModule; saved: SavedConnection };

type ConnectionRow = inferRouterOutputs<AppRouter>["connections"]["list"][number];
type Flash = { ok: boolean; text: string } | null;

export function Connections({ orgSlug, canEdit }: { orgSlug: string; canEdit: boolean }) {
  const trpc = useTRPC();
  const list = useQuery(trpc.connections.list.queryOptions({ orgSlug }));
  const [open, setOpen] = useState<Open>({ mode: "closed" });
  const [flash, setFlash] = useState<Flash>(null);
  const { done, onDelete } = useConnectionWrites(orgSlug, open, setOpen, setFlash);
  const onEdit = (c: ConnectionRow) => {
    const kind = connectionKind(c.kind);
    setFlash(null);
    if (kind) setOpen({ mode: "edit", kind, saved: { id: c.id, name: c.name, config: c.config, hasSecret: c.hasSecret } });
  };

  return (
    <section className="connections" id="connections">
      <h2>Connections</h2>
      <p className="small muted" style={{ marginTop: 0 }}>
        The accounts steps use: a mailbox to send from, an AI model, your CRM, Slack for approvals, and credentials for HTTP APIs. Secrets are kept
        encrypted and never shown again.
      </p>
      {flash && (
        <p className={`flash ${flash.ok ? "flash-ok" : "flash-error"}`} role={flash.ok ? "status" : "alert"} data-flash={flash.ok ? "ok" : "error"}>
          {flash.text}
        </p>
      )}
      {list.error && <p className="flash flash-error">The connections could not be loaded: {list.error.message}</p>}
      {list.data?.length === 0 && <p className="empty muted">No connections yet. Email, model, CRM and Slack steps each need one.</p>}
      {list.data && list.data.length > 0 && <ConnectionsTable rows={list.data} canEdit={canEdit} onEdit={onEdit} onDelete={onDelete} />}
      {canEdit && open.mode === "closed" && (
        <p>
          <button type="button" className="primary" onClick={() => (setFlash(null), setOpen({ mode: "pick" }))}>
            Add connection
          </button>
        </p>
      )}
      {open.mode === "pick" && <KindPicker onPick={(kind) => setOpen({ mode: "new", kind })} onCancel={() => setOpen({ mode: "closed" })} />}
      {(open.mode === "new" || open.mode === "edit") && (
        <div className="card" style={{ marginTop: "1rem" }}>
          <ConnectionForm
            key={open.mode === "edit" ? open.saved.id : open.kind.kind}
            orgSlug={orgSlug}
            kind={open.kind}
            saved={open.mode === "edit" ? open.saved : null}
            onDone={done}
            onCancel={() => setOpen({ mode: "closed" })}
          />
        </div>
      )}
    </section>
  );
}

/** A saved form closes and says so; Delete asks first, and closes the form of the connection it deleted. */
function useConnectionWrites(orgSlug: string, open: Open, setOpen: (open: Open) => void, setFlash: (flash: Flash) => void) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const remove = useMutation(trpc.connections.delete.mutationOptions());
  const refresh = () => reloadAfterWrite(qc, trpc.connections.list.queryKey({ orgSlug }));

  const done = async (message: string) => {
    setOpen({ mode: "closed" });
    setFlash({ ok: true, text: message });
    await refresh();
  };

  async function onDelete(id: string, name: string) {
    setFlash(null);
    if (!window.confirm(`Delete the connection "${name}"? Steps that name it will no longer find it.`)) return;
    try {
      const r = await remove.mutateAsync({ orgSlug, connectionId: id });
      setFlash({ ok: true, text: r.message });
      if (open.mode === "edit" && open.saved.id === id) setOpen({ mode: "closed" });
      await refresh();
    } catch (error) {
      setFlash({ ok: false, text: (error as Error).message });
    }
  }
  return { done, onDelete };
}

function ConnectionsTable({
  rows,
  canEdit,
  onEdit,
  onDelete,
}: {
  rows: ConnectionRow[];
  canEdit: boolean;
  onEdit: (c: ConnectionRow) => void;
  onDelete: (id: string, name: string) => void;
}) {
  return (
    <table>
      <thead>
        <tr>
          <th>Name</th>
          <th>Kind</th>
          <th>Settings</th>
          <th>Status</th>
          <th>Used by</th>
          {canEdit && (
            <th>
              <span className="sr-only">Actions</span>
            </th>
          )}
        </tr>
      </thead>
      <tbody>
        {rows.map((c) => (
          <tr key={c.id} data-connection={c.name}>
            <td>
              <strong>{c.name}</strong>
            </td>
            <td>{c.label}</td>
            <td className="small">
              {c.summary}
              <div className="muted">{c.hasSecret ? "secret saved" : "no secret"}</div>
            </td>
            <td>
              {c.status === "ok" ? <span className="badge badge-done">working</span> : <span className="badge badge-needs_review">needs reconnecting</span>}
              {c.statusReason ? <div className="small muted">{c.statusReason}</div> : null}
            </td>
            <td className="small">
              <UsedBy usedBy={c.usedBy} />
            </td>
            {canEdit && (
              <td style={{ whiteSpace: "nowrap" }}>
                <button type="button" onClick={() => onEdit(c)}>
                  Edit
                </button>{" "}
                <button type="button" className="danger" onClick={() => onDelete(c.id, c.name)}>
                  Delete
                </button>
              </td>
            )}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** The published versions that use a connection (with the runs still on older ones). */
function UsedBy({ usedBy }: { usedBy: ConnectionRow["usedBy"] }) {
  if (usedBy.length === 0) return <span className="muted">no published version</span>;
  return (
    <>
      {usedBy.map((u) => (
        <div key={`${u.automationId}:${u.version}`}>
          <a href={`/automations/${u.automationId}`}>{u.automationName}</a> version {u.version}
          {u.latest ? "" : <span className="muted"> ({u.running} running)</span>}
        </div>
      ))}
    </>
  );
}

/** "What do you want to connect?": a card per connection kind. */
function KindPicker({ onPick, onCancel }: { onPick: (kind: ConnectionKindModule) => void; onCancel: () => void }) {
  return (
    <div className="stack" style={{ marginTop: "1rem" }}>
      <h3 style={{ margin: 0 }}>What do you want to connect?</h3>
      <ul className="cards" style={{ gridTemplateColumns: "repeat(auto-fill, minmax(15rem, 1fr))", margin: 0 }}>
        {connectionKinds.map((k) => (
          <li key={k.kind}>
            <button
              type="button"
              className="card kind-card"
              data-kind={k.kind}
              onClick={() => onPick(k)}
              style={{ width: "100%", height: "100%", textAlign: "left", display: "flex", flexDirection: "column", gap: "0.3rem" }}
            >
              <strong>{k.label}</strong>
              <span className="small muted">{k.description}</span>
            </button>
          </li>
        ))}
      </ul>
      <p>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </p>
    </div>
  );
}
