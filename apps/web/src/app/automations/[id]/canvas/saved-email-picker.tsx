"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { reloadAfterWrite, useTRPC } from "../../../../server/trpc/client";
import { problemsOf } from "../../saved-emails/saved-email-form";
import type { SavedEmailShown } from "../../saved-emails/saved-emails";

type StepEmail = { subject?: string; text?: string; html?: string; savedEmail?: { id: string; name: string } };

/** The step's subject and bodies as they are now, against the saved email's (an absent HTML is none in both). */
const sameAs = (c: StepEmail, s: SavedEmailShown) => (c.subject ?? "") === s.subject && (c.text ?? "") === s.text && (c.html ?? null) === s.html;

/**
 * A send step's saved emails: "Use a saved email" copies one's subject, message and HTML message into the step (a copy:
 * a published version never changes when the saved email does), and the step remembers which one for display only;
 * "Save as a saved email" keeps the step's subject and message for other steps. Viewers see where the step's text
 * came from.
 */
export function SavedEmailPicker({ orgSlug, canEdit, config, apply }: { orgSlug: string; canEdit: boolean; config: StepEmail; apply: (config: StepEmail) => void }) {
  const trpc = useTRPC();
  const list = useQuery(trpc.savedEmails.list.queryOptions({ orgSlug }));
  const [chosen, setChosen] = useState("");
  const [saving, setSaving] = useState(false);
  const saved = list.data ?? [];
  const fill = (s: SavedEmailShown) => {
    const { html: _html, ...rest } = config;
    apply({ ...rest, subject: s.subject, text: s.text, ...(s.html !== null ? { html: s.html } : {}), savedEmail: { id: s.id, name: s.name } });
  };
  const origin = config.savedEmail;
  const source = origin ? saved.find((s) => s.id === origin.id) : undefined;
  return (
    <div className="saved-email-picker stack" data-testid="saved-email-picker">
      {origin && (
        <p className="small saved-email-origin" data-origin={source ? (sameAs(config, source) ? "same" : "changed") : "gone"}>
          From the saved email “{source?.name ?? origin.name}”
          {list.isPending ? "." : !source ? " (since deleted): the step keeps its copy." : sameAs(config, source) ? "." : "; changed since."}
          {canEdit && source && !sameAs(config, source) && (
            <>
              {" "}
              <button type="button" className="linklike" onClick={() => fill(source)}>
                Copy it again
              </button>
            </>
          )}
        </p>
      )}
      {canEdit && (
        <div className="saved-email-use">
          <label className="small" htmlFor="saved-email-choice">
            Use a saved email
          </label>
          <div className="row-inline">
            <select id="saved-email-choice" value={chosen} onChange={(e) => setChosen(e.target.value)} disabled={saved.length === 0}>
              <option value="">{list.isPending ? "Loading…" : saved.length === 0 ? "No saved emails yet" : "Choose one…"}</option>
              {saved.map((s) => (
                <option key={s.id} value={s.id}>
                  {s.name}
                </option>
              ))}
            </select>
            <button
              type="button"
              disabled={!chosen}
              onClick={() => {
                const s = saved.find((x) => x.id === chosen);
                if (s) fill(s);
                setChosen("");
              }}
            >
              Use this email
            </button>
          </div>
          <span className="small muted">
            Replaces this step’s subject and message with a copy (Undo brings them back).{" "}
            <a href={`/automations/saved-emails?org=${orgSlug}`} target="_blank" rel="noreferrer">
              Manage saved emails
            </a>
          </span>
          {chosen && <ChosenPreview s={saved.find((x) => x.id === chosen)} />}
        </div>
      )}
      {canEdit &&
        (saving ? (
          <SaveAsForm orgSlug={orgSlug} config={config} onSaved={(s) => (apply({ ...config, savedEmail: { id: s.id, name: s.name } }), setSaving(false))} onCancel={() => setSaving(false)} />
        ) : (
          <button type="button" className="linklike small save-as" onClick={() => setSaving(true)}>
            Save as a saved email…
          </button>
        ))}
    </div>
  );
}

function ChosenPreview({ s }: { s: SavedEmailShown | undefined }) {
  if (!s) return null;
  return (
    <div className="small saved-email-preview">
      <div>
        <strong>Subject:</strong> {s.subject}
      </div>
      <div className="muted saved-email-preview-text">{s.text.length > 160 ? `${s.text.slice(0, 160)}…` : s.text}</div>
      {s.notes.map((n) => (
        <div key={n} className="saved-email-note">
          ⚠ {n}
        </div>
      ))}
    </div>
  );
}

/** Keeps the step's subject and bodies as a new saved email under a name; a second click saves nothing twice. */
function SaveAsForm({ orgSlug, config, onSaved, onCancel }: { orgSlug: string; config: StepEmail; onSaved: (s: SavedEmailShown) => void; onCancel: () => void }) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const create = useMutation(trpc.savedEmails.create.mutationOptions());
  const [name, setName] = useState("");
  const [error, setError] = useState<string | null>(null);
  const missing = !config.subject ? "Write the step's subject first." : !config.text ? "Write the step's message first." : null;
  const submit = async () => {
    if (create.isPending || missing) return;
    setError(null);
    try {
      const r = await create.mutateAsync({ orgSlug, name, subject: config.subject ?? "", text: config.text ?? "", html: config.html ?? null });
      await reloadAfterWrite(qc, trpc.savedEmails.list.queryKey({ orgSlug }));
      onSaved(r.saved);
    } catch (err) {
      const p = problemsOf(err);
      setError([...(p.name ?? []), ...(p.subject ?? []), ...(p.text ?? []), ...(p.html ?? [])].join(" ") || (err as Error).message);
    }
  };
  return (
    <fieldset className="saved-email-save-as stack" aria-label="Save as a saved email">
      <label className="small">
        Name of the saved email
        <input
          value={name}
          maxLength={100}
          placeholder="Welcome 1"
          onChange={(e) => setName(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === "Enter") {
              e.preventDefault();
              void submit();
            }
          }}
        />
      </label>
      {missing && <span className="small muted">{missing}</span>}
      {error && (
        <span className="field-error small" role="alert">
          {error}
        </span>
      )}
      <div className="row-inline">
        <button type="button" className="primary" disabled={!name.trim() || !!missing || create.isPending} aria-busy={create.isPending || undefined} onClick={() => void submit()}>
          Save
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </fieldset>
  );
}
