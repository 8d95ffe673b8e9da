"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { reloadAfterWrite, useTRPC } from "../../server/trpc/client";
import { SubmitButton } from "../submit-button";
import { useFlash } from "./flash";
import { draftOf, type WindowDraft, WindowFields, WindowPreview, windowOf } from "./quiet-hours-window";

/**
 * Settings -> Quiet hours (issue 44): the hours and days when the organisation's emails may go out, in each contact's
 * zone, or none. Every automation follows them unless its own page says otherwise. Owners change them; everyone reads
 * the sentence, with who changed it last.
 */
export function QuietHours({ orgSlug, canEdit }: { orgSlug: string; canEdit: boolean }) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const view = useQuery(trpc.quietHours.org.queryOptions({ orgSlug }));
  const set = useMutation(trpc.quietHours.setOrg.mutationOptions());
  const { attempt, view: flash } = useFlash();
  const v = view.data;
  return (
    <section className="quiet-hours" id="quiet-hours" aria-label="quiet hours">
      <h2>Quiet hours</h2>
      <p className="small muted" style={{ marginTop: 0 }}>
        When emails may go out, in the contact's own time zone: a send step reached at night waits for the morning instead of arriving at 02:00. An automation can
        use its own hours or none (on its page).
      </p>
      {flash}
      {v && (
        <p data-quiet-now>
          {v.sentence}
          {v.updatedBy && v.updatedAt && (
            <span className="small muted">
              {" "}
              (changed by {v.updatedBy.replace(/^user:/, "")} on {new Date(v.updatedAt).toISOString().slice(0, 16).replace("T", " ")} UTC)
            </span>
          )}
        </p>
      )}
      {v && canEdit && (
        <QuietHoursForm
          key={JSON.stringify(v.window)}
          orgSlug={orgSlug}
          on={v.window !== null}
          initial={draftOf(v.window)}
          pending={set.isPending}
          save={(window) =>
            attempt(async () => {
              const r = await set.mutateAsync({ orgSlug, window });
              await reloadAfterWrite(qc, trpc.quietHours.org.queryKey({ orgSlug }));
              return r.message;
            })
          }
        />
      )}
      {v && !canEdit && <p className="small muted">Only owners change quiet hours.</p>}
    </section>
  );
}

function QuietHoursForm(p: { orgSlug: string; on: boolean; initial: WindowDraft; pending: boolean; save: (w: ReturnType<typeof windowOf> | null) => Promise<boolean> }) {
  const [on, setOn] = useState(p.on);
  const [draft, setDraft] = useState(p.initial);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void p.save(on ? windowOf(draft) : null);
  };
  return (
    <form className="stack" onSubmit={submit} aria-label="change quiet hours">
      <div className="row-inline">
        <label className="check">
          <input type="radio" name="quiet-mode" value="off" checked={!on} onChange={() => setOn(false)} />
          No quiet hours (emails go out at any hour)
        </label>
        <label className="check">
          <input type="radio" name="quiet-mode" value="on" checked={on} onChange={() => setOn(true)} />
          Only at these hours
        </label>
      </div>
      {on && <WindowFields name="org-quiet" draft={draft} onChange={setDraft} disabled={false} />}
      <WindowPreview orgSlug={p.orgSlug} window={on ? windowOf(draft) : null} />
      <div>
        <SubmitButton className="primary" pending={p.pending}>Save quiet hours</SubmitButton>
      </div>
    </form>
  );
}
