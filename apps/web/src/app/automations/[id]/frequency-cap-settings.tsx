"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { reloadAfterWrite, useTRPC } from "../../../server/trpc/client";
import { capSentence } from "../../settings/frequency-cap";

/**
 * The automation's part in the organisation's frequency cap (Settings -> Frequency cap): transactional (neither limited
 * nor counted; the owner's to mark, as it takes the automation out of the owner's cap) and what a send over the cap
 * does (editors choose). Each change is saved at once; clicking the same choice again changes nothing.
 */
export function FrequencyCapSettings({ orgSlug, automationId }: { orgSlug: string; automationId: string }) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const input = { orgSlug, automationId };
  const view = useQuery(trpc.frequencyCap.automation.queryOptions(input));
  const reload = () => reloadAfterWrite(qc, trpc.frequencyCap.automation.queryKey(input));
  const setTransactional = useMutation(trpc.frequencyCap.setTransactional.mutationOptions({ onSuccess: reload }));
  const setAction = useMutation(trpc.frequencyCap.setCappedAction.mutationOptions({ onSuccess: reload }));
  if (!view.data) return view.isError ? <p className="field-error">Could not load the frequency cap settings: {view.error.message}</p> : null;
  const d = view.data;
  const pending = setTransactional.isPending || setAction.isPending;
  const error = setTransactional.error ?? setAction.error;
  return (
    <section className="stack small" aria-label="frequency cap" data-frequency-cap-automation={d.transactional ? "transactional" : d.cappedAction}>
      <strong>Frequency cap</strong>
      <span className="muted">
        {d.orgCap ? `The organisation's cap: ${capSentence(d.orgCap)} (Settings).` : "The organisation has no frequency cap (Settings); these apply once one is set."}
      </span>
      <label className="check">
        <input type="checkbox" name="transactional" checked={d.transactional} disabled={!d.mayMarkTransactional || pending} onChange={(e) => setTransactional.mutate({ ...input, transactional: e.target.checked })} />
        Transactional: not capped (receipts, password resets; its emails are not counted either). Quiet hours still
        apply: choose "No quiet hours for this automation" above if these emails must go out at night.
      </label>
      {!d.mayMarkTransactional && <span className="muted">Only owners mark an automation transactional.</span>}
      <fieldset className="stack" disabled={d.transactional || !d.mayChooseAction || pending}>
        <legend>When a send is over the cap</legend>
        <label className="check">
          <input type="radio" name="capped-action" value="wait" checked={d.cappedAction === "wait"} onChange={() => setAction.mutate({ ...input, cappedAction: "wait" })} />
          Wait until the cap allows it (the run page says until when)
        </label>
        <label className="check">
          <input type="radio" name="capped-action" value="skip" checked={d.cappedAction === "skip"} onChange={() => setAction.mutate({ ...input, cappedAction: "skip" })} />
          Skip it (the run goes on without that email and says why)
        </label>
      </fieldset>
      {error && <p className="field-error">{error.message}</p>}
    </section>
  );
}
