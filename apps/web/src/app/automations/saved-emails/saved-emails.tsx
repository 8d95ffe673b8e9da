"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { inferRouterOutputs } from "@trpc/server";
import { useState } from "react";
import { reloadAfterWrite, useTRPC } from "../../../server/trpc/client";
import type { AppRouter } from "../../../server/trpc/router";
import { useFlash } from "../../settings/flash";
import { SavedEmailForm } from "./saved-email-form";

export type SavedEmailShown = inferRouterOutputs<AppRouter>["savedEmails"]["list"][number];

/**
 * The list of saved emails with what each uses (its variables, and the steps it needs), and the form that creates or
 * changes one. Viewers read; editors and owners change and delete (as they edit automations).
 */
export function SavedEmails({ orgSlug, canEdit, editId }: { orgSlug: string; canEdit: boolean; editId: string | null }) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const list = useQuery(trpc.savedEmails.list.queryOptions({ orgSlug }));
  const remove = useMutation(trpc.savedEmails.remove.mutationOptions());
  const [editing, setEditing] = useState<string | "new" | null>(editId);
  const { attempt, view, clear } = useFlash();
  const reload = () => reloadAfterWrite(qc, trpc.savedEmails.list.queryKey({ orgSlug }));
  const current = list.data?.find((s) => s.id === editing);

  if (list.isError) return <p className="flash flash-error">Could not load the saved emails: {list.error.message}</p>;
  return (
    <section className="saved-emails" aria-label="Saved emails">
      {view}
      {canEdit && editing === null && (
        <button type="button" className="primary" onClick={() => (clear(), setEditing("new"))}>
          New saved email
        </button>
      )}
      {canEdit && (editing === "new" || current) && (
        <SavedEmailForm
          key={current ? `${current.id}:${String(current.updatedAt)}` : "new"}
          orgSlug={orgSlug}
          editing={current ?? null}
          onDone={async (message) => {
            setEditing(null);
            await attempt(async () => (await reload(), message));
          }}
          onCancel={() => setEditing(null)}
        />
      )}
      {list.data?.length === 0 && editing === null ? (
        <p className="empty muted">
          No saved emails yet.{" "}
          {canEdit ? "Create one here, or in a Send email step choose Save as a saved email." : "Editors and owners create them."}
        </p>
      ) : (
        <ul className="cards">
          {list.data?.map((s) => (
            <SavedEmailCard
              key={s.id}
              s={s}
              canEdit={canEdit}
              onEdit={() => (clear(), setEditing(s.id))}
              onDelete={() =>
                attempt(async () => {
                  const r = await remove.mutateAsync({ orgSlug, savedEmailId: s.id });
                  if (editing === s.id) setEditing(null);
                  await reload();
                  return r.message;
                })
              }
            />
          ))}
        </ul>
      )}
    </section>
  );
}

function SavedEmailCard({ s, canEdit, onEdit, onDelete }: { s: SavedEmailShown; canEdit: boolean; onEdit: () => void; onDelete: () => void }) {
  const [confirming, setConfirming] = useState(false);
  return (
    <li className="card saved-email" data-saved-email={s.name}>
      <div className="card-head">
        <strong className="card-title">{s.name}</strong>
        <span className="small muted">
          Subject: <span data-subject>{s.subject}</span>
        </span>
      </div>
      <pre className="content saved-email-text">{s.text}</pre>
      {s.html !== null && <p className="small muted">Also has an HTML message.</p>}
      <Variables s={s} />
      <p className="small muted">
        Last changed by {s.updatedBy} on {new Date(s.updatedAt).toLocaleString("en-GB", { dateStyle: "medium", timeStyle: "short" })}.
      </p>
      {canEdit && (
        <div className="decide">
          <button type="button" onClick={onEdit}>
            Edit
          </button>
          {confirming ? (
            <>
              <span className="small">Delete “{s.name}”? Steps that used it keep their copy.</span>
              <button type="button" className="danger" onClick={onDelete}>
                Delete
              </button>
              <button type="button" onClick={() => setConfirming(false)}>
                Keep it
              </button>
            </>
          ) : (
            <button type="button" className="danger" onClick={() => setConfirming(true)}>
              Delete…
            </button>
          )}
        </div>
      )}
    </li>
  );
}

/** The variables the saved email uses, and the steps an automation needs for them. */
export function Variables({ s }: { s: Pick<SavedEmailShown, "variables" | "notes"> }) {
  if (s.variables.length === 0) return <p className="small muted">Uses no variables: every contact gets the same text.</p>;
  return (
    <div className="small saved-email-vars">
      <span className="muted">Uses </span>
      {s.variables.map((v) => (
        <code key={v.path} className="var-chip" data-variable={v.path}>{`{{${v.path}}}`}</code>
      ))}
      {s.notes.map((n) => (
        <p key={n} className="saved-email-note" data-note>
          ⚠ {n}
        </p>
      ))}
    </div>
  );
}
