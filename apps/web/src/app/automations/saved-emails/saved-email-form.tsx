"use client";

import { useMutation } from "@tanstack/react-query";
import { TRPCClientError } from "@trpc/client";
import { useState } from "react";
import { useTRPC } from "../../../server/trpc/client";
import { SubmitButton } from "../../submit-button";
import type { SavedEmailShown } from "./saved-emails";

type Field = "name" | "subject" | "text" | "html";
type Problems = Partial<Record<Field, string[]>>;

/** The problems the server named per field (a malformed {{, a taken name), so each shows under its own field. */
export function problemsOf(error: unknown): Problems {
  const out: Problems = {};
  if (!(error instanceof TRPCClientError)) return out;
  const data = error.data as { holdfast?: { code?: string; problems?: { field: Field; message: string }[] | null }; issues?: { path: string; message: string }[] } | undefined;
  for (const p of data?.holdfast?.problems ?? []) out[p.field] = [...(out[p.field] ?? []), p.message];
  if (data?.holdfast?.code === "saved_email_exists") out.name = [error.message];
  for (const i of data?.issues ?? []) {
    const f = i.path.split(".").at(-1) as Field;
    if (["name", "subject", "text", "html"].includes(f)) out[f] = [...(out[f] ?? []), i.message];
  }
  return out;
}

const help = "Variables: {{contact.name}}, {{contact.email}}, {{contact.company}}, {{input.<field>}} from the trigger, {{steps.<step>.output.text}} from an earlier step.";

type Content = { name: string; subject: string; text: string; html: string | null };

/** The save: create or change, the server's problems per field, and nothing sent twice while one is under way. */
function useSave(orgSlug: string, editing: SavedEmailShown | null, onDone: (message: string) => void) {
  const trpc = useTRPC();
  const create = useMutation(trpc.savedEmails.create.mutationOptions());
  const update = useMutation(trpc.savedEmails.update.mutationOptions());
  const [problems, setProblems] = useState<Problems>({});
  const [error, setError] = useState<string | null>(null);
  const pending = create.isPending || update.isPending;
  const save = async (content: Content) => {
    if (pending) return;
    setProblems({});
    setError(null);
    try {
      const r = editing
        ? await update.mutateAsync({ orgSlug, savedEmailId: editing.id, readAt: new Date(editing.updatedAt), content })
        : await create.mutateAsync({ orgSlug, ...content });
      onDone(r.message);
    } catch (err) {
      const p = problemsOf(err);
      setProblems(p);
      if (Object.keys(p).length === 0) setError((err as Error).message);
    }
  };
  return { save, problems, error, pending };
}

/** Creates a saved email, or changes one (as read when the form opened: a newer change by someone else is refused). */
export function SavedEmailForm({
  orgSlug,
  editing,
  onDone,
  onCancel,
}: {
  orgSlug: string;
  editing: SavedEmailShown | null;
  onDone: (message: string) => void;
  onCancel: () => void;
}) {
  const { save, problems, error, pending } = useSave(orgSlug, editing, onDone);
  const field = (f: Field) =>
    (problems[f] ?? []).map((m) => (
      <span key={m} className="field-error small" role="alert">
        {m}
      </span>
    ));
  return (
    <form
      className="stack card saved-email-form"
      aria-label={editing ? `Edit ${editing.name}` : "New saved email"}
      onSubmit={(e) => {
        e.preventDefault();
        const f = e.currentTarget;
        const get = (n: string) => (f.elements.namedItem(n) as HTMLInputElement).value;
        void save({ name: get("name"), subject: get("subject"), text: get("text"), html: get("html").trim() === "" ? null : get("html") });
      }}
    >
      <h2>{editing ? `Edit “${editing.name}”` : "New saved email"}</h2>
      <label>
        Name
        <input name="name" required maxLength={100} defaultValue={editing?.name ?? ""} placeholder="Welcome 1" aria-invalid={!!problems.name} />
      </label>
      {field("name")}
      <label>
        Subject
        <input name="subject" required maxLength={1000} defaultValue={editing?.subject ?? ""} placeholder="Welcome, {{contact.name}}" aria-invalid={!!problems.subject} />
      </label>
      {field("subject")}
      <label>
        Message
        <textarea name="text" required rows={8} maxLength={100_000} defaultValue={editing?.text ?? ""} aria-invalid={!!problems.text} />
      </label>
      {field("text")}
      <details open={!!editing?.html || !!problems.html}>
        <summary>HTML message (optional)</summary>
        <label>
          HTML message
          <textarea name="html" rows={6} maxLength={200_000} defaultValue={editing?.html ?? ""} aria-invalid={!!problems.html} />
        </label>
        {field("html")}
      </details>
      <p className="small muted">{help}</p>
      {error && (
        <p className="flash flash-error" role="alert">
          {error}
        </p>
      )}
      <div className="decide">
        <SubmitButton className="primary" pending={pending}>
          {editing ? "Save changes" : "Save"}
        </SubmitButton>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
