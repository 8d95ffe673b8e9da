"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useState } from "react";
import { reloadAfterWrite, useTRPC } from "../../../server/trpc/client";
import { SampleAndTestRun } from "./trigger-sample";

/** The panel polls while it is open: a delivery sent from a form tool shows up within a few seconds. */
const refreshMs = 4_000;

const outcomeBadge = { accepted: "badge-completed", duplicate: "badge-waiting", refused: "badge-failed" } as const;

type SameBy = "webhook_id" | "id_field" | "identical" | "new" | null;

const clock = (at: Date | string) => new Date(at).toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit" });

/** What happened, in plain words (a refusal's reason is already a sentence from the server). */
export function describe(d: {
  outcome: "accepted" | "duplicate" | "refused";
  reason: string | null;
  sameBy?: SameBy;
  sameValue?: string | null;
  runStartedAt?: Date | string | null;
}): string {
  if (d.outcome === "accepted") return d.sameBy === "new" ? "Started a run (every submission is treated as new)." : "Started a run.";
  if (d.outcome === "duplicate") {
    const as = d.runStartedAt ? ` as ${clock(d.runStartedAt)}` : " as an earlier delivery";
    const how =
      d.sameBy === "identical"
        ? "identical form"
        : d.sameBy === "id_field"
          ? `same id ${d.sameValue ?? ""}`.trim()
          : d.sameBy === "webhook_id"
            ? "sent again by the sender"
            : "same event";
    return `Same submission${as} (${how}): answered with its run, nothing started, nobody gets a second email.`;
  }
  return d.reason ? `Refused: ${d.reason}.` : "Refused.";
}

/**
 * Below the trigger's address: its recent deliveries (accepted, repeated and refused with the reason), the sample
 * payload the variable picker reads `input.*` from, and Test run.
 */
export function TriggerDeliveries({ orgSlug, automationId, canEdit, steps = [] }: { orgSlug: string; automationId: string; canEdit: boolean; steps?: { id: string; kind: string }[] }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const input = { orgSlug, automationId };
  const deliveries = useQuery(trpc.triggers.deliveries.queryOptions(input, { refetchInterval: refreshMs }));
  const sample = useQuery(trpc.triggers.sample.queryOptions(input, { refetchInterval: refreshMs }));
  const refreshSample = () => reloadAfterWrite(queryClient, trpc.triggers.sample.queryKey(input));
  const chooseSample = useMutation(trpc.triggers.useAsSample.mutationOptions({ onSuccess: refreshSample }));
  const [sampleFrom, setSampleFrom] = useState<string | null>(null);
  const zone = typeof Intl !== "undefined" ? Intl.DateTimeFormat().resolvedOptions().timeZone : "";
  const takeAsSample = async (deliveryId: string) => {
    await chooseSample.mutateAsync({ orgSlug, deliveryId });
    setSampleFrom(deliveryId);
  };

  return (
    <>
      <section className="stack trigger-settings" aria-label="recent deliveries">
        <div className="row" style={{ justifyContent: "space-between", alignItems: "baseline" }}>
          <h3>Recent deliveries</h3>
          <button type="button" className="linklike small" disabled={deliveries.isFetching} onClick={() => deliveries.refetch()}>
            Refresh
          </button>
        </div>
        {deliveries.isPending ? (
          <p className="muted small">Loading deliveries…</p>
        ) : deliveries.isError ? (
          <p className="field-error">Could not load the deliveries: {deliveries.error.message}</p>
        ) : deliveries.data.length === 0 ? (
          <p className="muted small">No deliveries yet. Send one to the URL above; it shows up here within a few seconds.</p>
        ) : (
          // A region of its own that scrolls (focusable, so a keyboard scrolls it too): the list grows to its
          // box and no further, so what is below it stays where it is when a delivery arrives.
          // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must take focus to scroll by keyboard
          <section className="deliveries-scroll" aria-label="recent deliveries, scrollable" tabIndex={0}>
            <table className="deliveries small">
              <thead>
                <tr>
                  <th title="Times are in your time zone">Delivery{zone ? ` (times in ${zone})` : ""}</th>
                </tr>
              </thead>
              <tbody>
                {deliveries.data.map((d) => (
                  <DeliveryRow key={d.id} d={d} canEdit={canEdit} choosing={chooseSample.isPending} takeAsSample={takeAsSample} />
                ))}
              </tbody>
            </table>
          </section>
        )}
        {chooseSample.error && <p className="field-error">{chooseSample.error.message}</p>}
        <p className="small muted">
          The newest 20 shown (50 deliveries and 10 refusals kept). A refused request's body is never stored; an accepted one's payload is its run's input.
        </p>
      </section>
      <SampleAndTestRun orgSlug={orgSlug} automationId={automationId} canEdit={canEdit} steps={steps} loading={sample.isPending} sample={sample.data} justChosen={!!sampleFrom} />
    </>
  );
}

type Delivery = Parameters<typeof describe>[0] & {
  id: string;
  status: number | null;
  receivedAt: Date | string;
  webhookId: string | null;
  contentType: string | null;
  bodyBytes: number | null;
  startKey: string | null;
  runId: string | null;
};

/** One delivery: its outcome and when, what happened in words, its headers, its run, and Use as sample. */
function DeliveryRow({ d, canEdit, choosing, takeAsSample }: { d: Delivery; canEdit: boolean; choosing: boolean; takeAsSample: (deliveryId: string) => Promise<void> }) {
  return (
    <tr data-delivery={d.id} data-outcome={d.outcome}>
      <td>
        <div>
          <span className={`badge ${outcomeBadge[d.outcome]}`}>{d.outcome}</span> <span className="muted">{d.status}</span>{" "}
          <time className="muted" dateTime={new Date(d.receivedAt).toISOString()} title={new Date(d.receivedAt).toISOString()}>
            {new Date(d.receivedAt).toLocaleString(undefined, { dateStyle: "short", timeStyle: "medium" })}
          </time>
        </div>
        <div className="delivery-reason">{describe(d)}</div>
        {(d.webhookId || d.contentType) && (
          <div className="muted wrap">{[d.webhookId ? `webhook-id ${d.webhookId}` : null, d.contentType, d.bodyBytes !== null ? `${d.bodyBytes} bytes` : null].filter(Boolean).join(" · ")}</div>
        )}
        {d.startKey && (
          <details className="muted small">
            <summary>Details</summary>
            <span className="mono wrap">start key {d.startKey}</span>
          </details>
        )}
        {(d.runId || (d.outcome === "accepted" && canEdit)) && (
          <div className="row">
            {d.runId && <Link href={`/runs/${d.runId}`}>Open run</Link>}
            {d.outcome === "accepted" && canEdit && (
              <button type="button" className="linklike" disabled={choosing} onClick={() => takeAsSample(d.id)}>
                Use as sample
              </button>
            )}
          </div>
        )}
      </td>
    </tr>
  );
}
