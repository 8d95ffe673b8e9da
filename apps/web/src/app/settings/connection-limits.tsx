"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { reloadAfterWrite, useTRPC } from "../../server/trpc/client";
import { SubmitButton } from "../submit-button";
import { numberOrNull, useFlash } from "./flash";

interface Limits {
  maxConcurrent?: number | undefined;
  breaker: { failureRate: number; minCalls: number; windowMs: number; coolDownMs: number };
}

/** "at most 4 at once; pauses after 50% of 5+ calls in 30 s fail, tries again after 30 s" */
export function limitsSentence(l: Limits): string {
  const cap = l.maxConcurrent ? `at most ${l.maxConcurrent} call${l.maxConcurrent === 1 ? "" : "s"} at once` : "no cap on calls at once";
  const b = l.breaker;
  return `${cap}; pauses when ${Math.round(b.failureRate * 100)}% of ${b.minCalls} or more calls within ${b.windowMs / 1000} s fail, tries one call again after ${b.coolDownMs / 1000} s`;
}

/**
 * Settings -> Connection limits: every connection's cap on calls in flight (across all workers) and its circuit
 * breaker, with what they hold back right now. The connections list itself is connections.tsx; each row here has
 * its own Limits form (`ConnectionLimits`).
 */
export function ConnectionLimitsSection({ orgSlug, canEdit }: { orgSlug: string; canEdit: boolean }) {
  const trpc = useTRPC();
  const list = useQuery(trpc.connectionLimits.list.queryOptions({ orgSlug }));
  const [open, setOpen] = useState<string | null>(null);
  if (!list.data || list.data.length === 0) return null;
  return (
    <section className="connection-limits">
      <h2>Connection limits</h2>
      <p className="small muted" style={{ marginTop: 0 }}>
        How hard steps may use each account: how many calls may be in flight at once across all workers, and when to pause calls to a failing service (the
        steps wait and resume by themselves once a trial call works).
      </p>
      <table>
        <thead>
          <tr>
            <th>Connection</th>
            <th>Limits</th>
            <th>Now</th>
            <th>
              <span className="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {list.data.map((c) => (
            <tr key={c.id} data-connection={c.name}>
              <td>
                {c.name} <span className="muted small">{c.kind}</span>
              </td>
              <td className="small">
                {limitsSentence(c.limits)}
                {open === c.id && <ConnectionLimits orgSlug={orgSlug} connectionId={c.id} name={c.name} limits={c.limits} onDone={() => setOpen(null)} />}
              </td>
              <td className="small">
                {c.inFlight} in flight
                {c.breakerState !== "closed" && <span className="warn"> · paused ({c.breakerState === "open" ? "failing" : "trying one call"})</span>}
                {c.parkedSteps > 0 && <span className="warn"> · {c.parkedSteps} waiting</span>}
              </td>
              <td>
                {canEdit && open !== c.id && (
                  <button type="button" onClick={() => setOpen(c.id)} aria-label={`Limits of ${c.name}`}>
                    Limits
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

/** The Limits form's fields as the API takes them: empty breaker fields keep their saved values. */
function limitsFromForm(form: HTMLFormElement) {
  const get = (n: string) => numberOrNull((form.elements.namedItem(n) as HTMLInputElement).value);
  const rate = get("failureRate");
  const minCalls = get("minCalls");
  const window = get("windowSeconds");
  const coolDown = get("coolDownSeconds");
  return {
    maxConcurrent: get("maxConcurrent"),
    breaker: {
      ...(rate === null ? {} : { failureRate: rate / 100 }),
      ...(minCalls === null ? {} : { minCalls }),
      ...(window === null ? {} : { windowMs: Math.round(window * 1000) }),
      ...(coolDown === null ? {} : { coolDownMs: Math.round(coolDown * 1000) }),
    },
  };
}

/** One connection's Limits form (owners). */
export function ConnectionLimits({
  orgSlug,
  connectionId,
  name,
  limits,
  onDone,
}: {
  orgSlug: string;
  connectionId: string;
  name: string;
  limits: Limits;
  onDone?: () => void;
}) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const set = useMutation(trpc.connectionLimits.set.mutationOptions());
  const { attempt, view } = useFlash();
  return (
    <form
      className="stack"
      aria-label={`Limits of ${name}`}
      onSubmit={async (e) => {
        e.preventDefault();
        const form = e.currentTarget;
        const ok = await attempt(async () => {
          const r = await set.mutateAsync({ orgSlug, connectionId, ...limitsFromForm(form) });
          await reloadAfterWrite(qc, trpc.connectionLimits.list.queryKey({ orgSlug }));
          return r.message;
        });
        if (ok) onDone?.();
      }}
    >
      <LimitsFields limits={limits} />
      <div className="row-inline">
        <SubmitButton className="primary" pending={set.isPending}>
          Save limits
        </SubmitButton>
        {onDone && (
          <button type="button" onClick={onDone}>
            Cancel
          </button>
        )}
      </div>
      {view}
    </form>
  );
}

function LimitsFields({ limits }: { limits: Limits }) {
  return (
    <>
      <label className="form-field">
        Calls at once (empty: no cap)
        <input name="maxConcurrent" inputMode="numeric" size={8} defaultValue={limits.maxConcurrent ?? ""} />
      </label>
      <label className="form-field">
        Pause when this % of calls fail
        <input name="failureRate" inputMode="numeric" size={8} defaultValue={Math.round(limits.breaker.failureRate * 100)} />
      </label>
      <label className="form-field">
        … of at least this many calls
        <input name="minCalls" inputMode="numeric" size={8} defaultValue={limits.breaker.minCalls} />
      </label>
      <label className="form-field">
        … within seconds
        <input name="windowSeconds" inputMode="decimal" size={8} defaultValue={limits.breaker.windowMs / 1000} />
      </label>
      <label className="form-field">
        Try one call again after seconds
        <input name="coolDownSeconds" inputMode="decimal" size={8} defaultValue={limits.breaker.coolDownMs / 1000} />
      </label>
    </>
  );
}
