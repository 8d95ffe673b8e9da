"use client";

import { useMutation, useQueries, useQuery, useQueryClient } from "@tanstack/react-query";
import { reloadAfterWrite, useTRPC } from "../../../server/trpc/client";
import { TriggerCredential, useCredentialActions } from "./trigger-credential";
import { EmailSettings } from "./email-settings";
import { TriggerDeliveries } from "./trigger-deliveries";

/** How a delivery sent twice is told apart, in each mode. */
const duplicateWords = {
  url_token:
    "Every form post starts a run, no special header needed. A submission sent twice starts no second run: one with the same id field (Event id field below) is the same submission; without an id, an identical submission within 24 hours (or the hours set below) is the same lead: it gets the first run, nobody gets a second email. Set 0 hours to treat every submission as new.",
  signed:
    "A delivery sent again with the same webhook-id header is the same event: it gets the first run, nobody gets a second email. Without that header, the Event id field below tells deliveries apart.",
} as const;

/**
 * Whether everything the trigger's panel shows has answered (or failed, which the panel then says): the panel waits
 * for it and appears whole. Each part arriving on its own grew the panel above the trigger's form, and a click aimed
 * at the form landed on whatever had moved under the pointer.
 */
export function useTriggerPanelLoaded(orgSlug: string, automationId: string, enabled: boolean): boolean {
  const trpc = useTRPC();
  const input = { orgSlug, automationId };
  const queries = useQueries({
    queries: [
      trpc.triggers.get.queryOptions(input, { enabled }),
      trpc.triggers.deliveries.queryOptions(input, { enabled }),
      trpc.triggers.sample.queryOptions(input, { enabled }),
      trpc.emails.summary.queryOptions(input, { enabled }),
      trpc.quietHours.automation.queryOptions(input, { enabled }),
      trpc.frequencyCap.automation.queryOptions(input, { enabled }),
    ],
  });
  // A query paused while the browser is offline leaves its part to say so: the form stays usable.
  return !enabled || queries.every((q) => !q.isPending || q.fetchStatus === "paused");
}

/**
 * The trigger's address and credential, in the trigger step's panel. Owners and editors see and rotate the signing
 * secret and the URL token and choose how senders authenticate; others see the mode and the base URL only. Below
 * them: the recent deliveries, the sample payload and Test run (trigger-deliveries.tsx).
 */
export function TriggerSettings({ orgSlug, automationId, canEdit, steps = [] }: {
  orgSlug: string;
  automationId: string;
  canEdit: boolean;
  /** The journey's steps (id, kind), for the Test run's choices. */
  steps?: { id: string; kind: string }[];
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const input = { orgSlug, automationId };
  const trigger = useQuery(trpc.triggers.get.queryOptions(input));
  const refresh = () => reloadAfterWrite(queryClient, trpc.triggers.get.queryKey(input));
  const setMode = useMutation(trpc.triggers.setMode.mutationOptions({ onSuccess: refresh }));
  const rotate = useMutation(trpc.triggers.rotate.mutationOptions({ onSuccess: refresh }));
  const revoke = useMutation(trpc.triggers.revokePrevious.mutationOptions({ onSuccess: refresh }));
  const { note, setNote, doRotate, doRevoke } = useCredentialActions({
    rotate: (kind) => rotate.mutateAsync({ ...input, kind }),
    revoke: (kind) => revoke.mutateAsync({ ...input, kind }),
  });

  if (trigger.isPending) return <p className="muted small">Loading the trigger's address…</p>;
  if (trigger.isError) return <p className="field-error">Could not load the trigger's address: {trigger.error.message}</p>;
  const t = trigger.data;
  const copy = async (text: string, what: string) => {
    await navigator.clipboard?.writeText(text).catch(() => {});
    setNote(`${what} copied.`);
  };

  return (
    <>
      <section className="stack trigger-settings" aria-label="trigger address">
        <h3>Trigger address</h3>
        <label>
          Senders authenticate with
          <select
            name="trigger-mode"
            value={t.mode}
            disabled={!canEdit || setMode.isPending}
            onChange={(e) => setMode.mutate({ ...input, mode: e.target.value as "signed" | "url_token" })}
          >
            <option value="signed">Signature (Standard Webhooks)</option>
            <option value="url_token">Token in the URL (form tools)</option>
          </select>
        </label>
        <label>
          URL (POST JSON or form data)
          <input name="trigger-url" readOnly value={t.credential || t.mode === "signed" ? t.url : `${t.url}/…`} onFocus={(e) => e.target.select()} />
        </label>
        <p className="small" data-duplicates={t.mode}>
          {duplicateWords[t.mode]}
        </p>
        {t.credential ? (
          <TriggerCredential t={{ ...t, credential: t.credential }} canEdit={canEdit} copy={copy} rotate={doRotate} rotating={rotate.isPending} revoke={doRevoke} revoking={revoke.isPending} />
        ) : (
          <p className="small muted">Only owners and editors can see the trigger's secret and token.</p>
        )}
        {(setMode.error || rotate.error || revoke.error) && <p className="field-error">{(setMode.error ?? rotate.error ?? revoke.error)?.message}</p>}
        {note && (
          <p className="small" role="status">
            {note}
          </p>
        )}
      </section>
      <TriggerDeliveries orgSlug={orgSlug} automationId={automationId} canEdit={canEdit} steps={steps} />
      <EmailSettings orgSlug={orgSlug} automationId={automationId} canEdit={canEdit} />
    </>
  );
}
