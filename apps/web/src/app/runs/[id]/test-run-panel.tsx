"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { inferRouterOutputs } from "@trpc/server";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { reloadAfterWrite, TrpcProvider, useTRPC } from "../../../server/trpc/client";
import type { AppRouter } from "../../../server/trpc/router";
import { HeldSend } from "./held-send";

/**
 * A test run's controls (issue 40): its virtual clock, and what waits for the tester: "Skip to <instant>" on a wait
 * (shown in its zone and in UTC), "Approve as …" / "Reject" on an approval (its approvers only), "Simulate a reply" /
 * "Simulate no reply" on a reply wait; "Play to the end" does them all as the test run's script says.
 */
export function TestRunPanel(props: { orgSlug: string; runId: string; canAct: boolean }) {
  return (
    <TrpcProvider>
      <Panel {...props} />
    </TrpcProvider>
  );
}

/** "Mon 7 Dec 09:00 Europe/Berlin (08:00 UTC)": an instant as the contact and as UTC read it. */
export function instantWords(at: Date | string, zone: string): string {
  const d = new Date(at);
  const local = new Intl.DateTimeFormat("en-GB", { weekday: "short", day: "numeric", month: "short", hour: "2-digit", minute: "2-digit", timeZone: zone, hourCycle: "h23" })
    .format(d)
    .replace(",", "");
  const utc = new Intl.DateTimeFormat("en-GB", { hour: "2-digit", minute: "2-digit", timeZone: "UTC", hourCycle: "h23" }).format(d);
  return zone === "UTC" ? `${local} UTC` : `${local} ${zone} (${utc} UTC)`;
}

type TestRunState = inferRouterOutputs<AppRouter>["testRuns"]["state"];
type Waiting = TestRunState["waiting"][number];
type Actions = ReturnType<typeof useTestRunActions>;

function Panel({ orgSlug, runId, canAct }: { orgSlug: string; runId: string; canAct: boolean }) {
  const trpc = useTRPC();
  const input = { orgSlug, runId };
  const state = useQuery(trpc.testRuns.state.queryOptions(input, { refetchInterval: (q) => (q.state.data?.status === "running" ? 1_500 : false) }));
  const actions = useTestRunActions(input);
  const s = state.data;

  return (
    <section className="card test-run-panel" aria-label="test run">
      <h2>Test run</h2>
      <p className="small">
        Nothing here reaches anyone: emails are built and shown, not sent{s?.sendTo ? ` (a copy of each goes to you, ${s.sendTo}, marked [Test])` : ""}; CRM updates and
        calls are recorded and answered as chosen when the test run started; contacts are not changed; approvals ask nobody.
      </p>
      {state.isError && <p className="field-error">Could not load the test run: {state.error.message}</p>}
      {s && (
        <>
          <p className="small" data-virtual-now={new Date(s.virtualNow).toISOString()}>
            The run's clock reads <strong>{instantWords(s.virtualNow, "UTC")}</strong>
            {s.status === "running" ? " (it moves forward when you skip a wait)." : "."}
          </p>
          {s.status === "running" && s.waiting.length === 0 && <p className="small muted">Working on the next step…</p>}
          <ul className="stack test-run-waiting">
            {s.waiting.map((w) => (
              <li key={w.stepId} data-waiting={w.kind} data-node={w.nodeId}>
                <WaitingControls w={w} canAct={canAct} actions={actions} />
              </li>
            ))}
          </ul>
          {s.status === "running" && <PlayToTheEnd s={s} canAct={canAct} actions={actions} />}
          {actions.play.data && <Played played={actions.play.data} />}
          {!canAct && <p className="small muted">Only owners and editors can act on a test run.</p>}
        </>
      )}
      {actions.error && <p className="field-error">{actions.error.message}</p>}
    </section>
  );
}

/** Skip, decide, reply and play, each reloading the test run's state and the page after it settles. */
function useTestRunActions(input: { orgSlug: string; runId: string }) {
  const trpc = useTRPC();
  const router = useRouter();
  const queryClient = useQueryClient();
  const after = { onSettled: () => Promise.all([reloadAfterWrite(queryClient, trpc.testRuns.state.queryKey(input)), router.refresh()]) };
  const skip = useMutation(trpc.testRuns.skip.mutationOptions(after));
  const decide = useMutation(trpc.testRuns.decide.mutationOptions(after));
  const reply = useMutation(trpc.testRuns.reply.mutationOptions(after));
  const play = useMutation(trpc.testRuns.play.mutationOptions(after));
  // One reply text for every reply wait; the approver chosen per approval.
  const [replyText, setReplyText] = useState("Yes, I'm interested: tell me more.");
  const [as, setAs] = useState<Record<string, string>>({});
  const busy = skip.isPending || decide.isPending || reply.isPending || play.isPending;
  const error = skip.error ?? decide.error ?? reply.error ?? play.error;
  return { input, skip, decide, reply, play, replyText, setReplyText, as, setAs, busy, error };
}

/** What waits for the tester, with its controls: a wait, an approval or a reply. */
function WaitingControls({ w, canAct, actions }: { w: Waiting; canAct: boolean; actions: Actions }) {
  const { input, skip, reply, replyText, setReplyText, busy } = actions;
  if (w.kind === "approval") return <ApprovalControls w={w} canAct={canAct} actions={actions} />;
  if (w.kind === "held") return <HeldSend w={w} when={instantWords} disabled={!canAct || busy} skip={(stepId) => skip.mutate({ ...input, stepId })} />;
  if (w.kind === "wait") {
    return (
      <>
        <span>
          “{w.nodeId}” would fire <strong data-would-fire={new Date(w.dueAt).toISOString()}>{instantWords(w.dueAt, w.zone)}</strong>.
        </span>{" "}
        <button type="button" name="skip" disabled={!canAct || busy} onClick={() => skip.mutate({ ...input, stepId: w.stepId })}>
          Skip to {instantWords(w.dueAt, w.zone)}
        </button>
      </>
    );
  }
  if (w.kind !== "reply") return null;
  return (
    <>
      <span>
        “{w.nodeId}” waits for a reply{w.dueAt && w.zone ? ` until ${instantWords(w.dueAt, w.zone)}` : ""}.
      </span>{" "}
      <input name="reply-text" value={replyText} onChange={(e) => setReplyText(e.target.value)} aria-label="the simulated reply" />{" "}
      <button type="button" name="reply" disabled={!canAct || busy || replyText.trim() === ""} onClick={() => reply.mutate({ ...input, stepId: w.stepId, text: replyText })}>
        Simulate a reply
      </button>{" "}
      <button type="button" name="no-reply" disabled={!canAct || busy} onClick={() => reply.mutate({ ...input, stepId: w.stepId, text: null })}>
        Simulate no reply
      </button>
    </>
  );
}

/** "Approve as …" (one of its approvers, chosen) or "Reject". */
function ApprovalControls({ w, canAct, actions }: { w: Extract<Waiting, { kind: "approval" }>; canAct: boolean; actions: Actions }) {
  const { input, decide, as, setAs, busy } = actions;
  if (w.approvers.length === 0) {
    return (
      <>
        <span>“{w.title}” waits for a decision.</span> <span className="field-error">Nobody in the organisation may decide it: add an approver.</span>
      </>
    );
  }
  const asUserId = as[w.approvalId] ?? (w.approvers[0]?.userId as string);
  return (
    <>
      <span>“{w.title}” waits for a decision.</span>{" "}
      <label className="inline">
        as{" "}
        <select name="approve-as" value={as[w.approvalId] ?? w.approvers[0]?.userId} onChange={(e) => setAs({ ...as, [w.approvalId]: e.target.value })}>
          {w.approvers.map((a) => (
            <option key={a.userId} value={a.userId}>
              {a.name}
            </option>
          ))}
        </select>
      </label>{" "}
      <button type="button" name="approve" disabled={!canAct || busy} onClick={() => decide.mutate({ ...input, approvalId: w.approvalId, decision: "approved", asUserId })}>
        Approve as {w.approvers.find((a) => a.userId === (as[w.approvalId] ?? w.approvers[0]?.userId))?.name}
      </button>{" "}
      <button type="button" name="reject" disabled={!canAct || busy} onClick={() => decide.mutate({ ...input, approvalId: w.approvalId, decision: "rejected", asUserId })}>
        Reject
      </button>
    </>
  );
}

function PlayToTheEnd({ s, canAct, actions }: { s: TestRunState; canAct: boolean; actions: Actions }) {
  const { input, play, busy } = actions;
  return (
    <div className="row">
      <button type="button" name="play" className="primary" disabled={!canAct || busy} onClick={() => play.mutate(input)}>
        {play.isPending ? "Playing…" : "Play to the end"}
      </button>
      <span className="small muted">
        Skips every wait, decides each approval ({Object.values(s.script.approvals).includes("reject") ? "as chosen" : "approve"}), and replies as chosen when the test run
        started.
      </span>
    </div>
  );
}

/** What "Play to the end" did, step by step. */
function Played({ played }: { played: NonNullable<Actions["play"]["data"]> }) {
  return (
    <div className="small" role="status" data-played={played.finished ? "finished" : "partly"}>
      {played.finished ? `Played to the end: the run ${played.status}.` : "Played as far as it could in one go: play again to go on."}
      <ol>
        {played.done.map((d) => (
          <li key={d}>{d}</li>
        ))}
      </ol>
    </div>
  );
}
