"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Fragment } from "react";
import { reloadAfterWrite, useTRPC } from "../../../server/trpc/client";
import type { StepEmailCounts } from "../../../server/step-email-counts";
import { emailRates, emailTotal, outcomeWords, rateWithCounts } from "../../email-rates";
import { QuietHoursOverride } from "./quiet-hours-override";
import { FrequencyCapSettings } from "./frequency-cap-settings";

/** Where the panels' figures come from, in words: every version's messages, all time, as the counts view's "All". */
const scope = "All versions, all time; test runs are not counted.";

/** One send step's outcome rates, in the step's panel: what became of the emails it sent (all versions, all time). */
export function EmailStepRates({ orgSlug, automationId, nodeId }: { orgSlug: string; automationId: string; nodeId: string }) {
  const trpc = useTRPC();
  const summary = useQuery(trpc.emails.summary.queryOptions({ orgSlug, automationId }));
  if (!summary.data) return null;
  const t = summary.data.steps.find((s: StepEmailCounts) => s.nodeId === nodeId);
  return (
    <section className="stack small" aria-label="what became of this step's emails" data-email-rates={nodeId}>
      <h3>What became of its emails</h3>
      {t ? <RatesList t={t} trackOpens={summary.data.trackOpens} /> : <p className="muted">No email sent by this step yet (test runs are not counted).</p>}
      {t && <p className="muted">{scope}</p>}
    </section>
  );
}

function RatesList({ t, trackOpens }: { t: StepEmailCounts; trackOpens: boolean }) {
  return (
    <dl className="facts">
      <dt>Sent</dt>
      <dd data-rate="sent">{t.sent}</dd>
      {emailRates(t).map((r) => (
        <Fragment key={r.key}>
          <dt>
            {outcomeWords[r.key]} <span className="muted">(of {r.base})</span>
          </dt>
          <dd data-rate={r.key}>{r.key === "opened" && !trackOpens && t.opened === 0 ? "not tracked" : rateWithCounts(r)}</dd>
        </Fragment>
      ))}
    </dl>
  );
}

/**
 * The automation's email settings and rates, in the trigger's panel: open tracking (off by default, with why an open
 * is only a hint) and, per send step, the share of its emails that reached each outcome.
 */
export function EmailSettings({ orgSlug, automationId, canEdit }: { orgSlug: string; automationId: string; canEdit: boolean }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const input = { orgSlug, automationId };
  const summary = useQuery(trpc.emails.summary.queryOptions(input));
  const set = useMutation(trpc.emails.setTrackOpens.mutationOptions({ onSuccess: () => reloadAfterWrite(queryClient, trpc.emails.summary.queryKey(input)) }));
  if (!summary.data) return summary.isError ? <p className="field-error">Could not load the email settings: {summary.error.message}</p> : null;
  const { trackOpens, steps } = summary.data;
  return (
    <section className="stack email-settings" aria-label="email settings">
      <h3>Emails</h3>
      <label className="check">
        <input type="checkbox" name="track-opens" checked={trackOpens} disabled={!canEdit || set.isPending} onChange={(e) => set.mutate({ ...input, on: e.target.checked })} />
        Track opens (adds an invisible image to HTML emails)
      </label>
      <p className="small muted">
        Many mail clients load images before anyone reads the message (Apple Mail, Gmail's image proxy), so an "open" is a hint, not proof.
        Clicks, replies and unsubscribes are recorded either way.
      </p>
      {set.error && <p className="field-error">{set.error.message}</p>}
      <QuietHoursOverride orgSlug={orgSlug} automationId={automationId} />
      <FrequencyCapSettings orgSlug={orgSlug} automationId={automationId} />
      {steps.length === 0 ? (
        <p className="small muted">No email sent yet (test runs are not counted).</p>
      ) : (
        [...(steps.length > 1 ? [{ nodeId: "", ...emailTotal(steps) }] : []), ...steps].map((t: StepEmailCounts) => (
          <div key={t.nodeId} className="small" data-email-rates={t.nodeId || "all"}>
            <strong>{t.nodeId || "All its emails"}</strong>
            <RatesList t={t} trackOpens={trackOpens} />
          </div>
        ))
      )}
      {steps.length > 0 && <p className="small muted">{scope}</p>}
    </section>
  );
}
