"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { reloadAfterWrite, TrpcProvider, useTRPC } from "../../../server/trpc/client";

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

function Panel({ orgSlug, runId, canAct }: { orgSlug: string; runId: string; canAct: boolean }) {
  const trpc = useTRPC();
  const router = useRouter();
  const queryClient = useQueryClient();
  const input = { orgSlug, runId };
  const state = useQuery(trpc.testRuns.state.queryOptions(input, { refetchInterval: (q) => (q.state.data?.status === "running" ? 1_500 : false) }));
  const after = { onSettled: () => Promise.all([reloadAfterWrite(queryClient, trpc.testRuns.state.queryKey(input)), router.refresh()]) };
  const skip = useMutation(trpc.testRuns.skip.mutationOptions(after));
  const decide = useMutation(trpc.testRuns.decide.mutationOptions(after));
  const reply = useMutation(trpc.testRuns.reply.mutationOptions(after));
  const play = useMutation(trpc.testRuns.play.mutationOptions(after));
  const [replyText, setReplyText] = useState("Yes, I'm interested: tell me more.");
  const [as, setAs] = useState<Record<string, string>>({});
  const busy = skip.isPending || decide.isPending || reply.isPending || play.isPending;
  const error = skip.error ?? decide.error ?? reply.error ?? play.error;
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
                {w.kind === "wait" && (
                  <>
                    <span>
                      “{w.nodeId}” would fire <strong data-would-fire={new Date(w.dueAt).toISOString()}>{instantWords(w.dueAt, w.zone)}</strong>.
                    </span>{" "}
                    <button type="button" name="skip" disabled={!canAct || busy} onClick={() => skip.mutate({ ...input, stepId: w.stepId })}>
                      Skip to {instantWords(w.dueAt, w.zone)}
                    </button>
                  </>
                )}
                {w.kind === "approval" && (
                  <>
                    <span>“{w.title}” waits for a decision.</span>{" "}
                    {w.approvers.length === 0 ? (
                      <span className="field-error">Nobody in the organisation may decide it: add an approver.</span>
                    ) : (
                      <>
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
                        <button
                          type="button"
                          name="approve"
                          disabled={!canAct || busy}
                          onClick={() => decide.mutate({ ...input, approvalId: w.approvalId, decision: "approved", asUserId: as[w.approvalId] ?? (w.approvers[0]?.userId as string) })}
                        >
                          Approve as {w.approvers.find((a) => a.userId === (as[w.approvalId] ?? w.approvers[0]?.userId))?.name}
                        </button>{" "}
                        <button
                          type="button"
                          name="reject"
                          disabled={!canAct || busy}
                          onClick={() => decide.mutate({ ...input, approvalId: w.approvalId, decision: "rejected", asUserId: as[w.approvalId] ?? (w.approvers[0]?.userId as string) })}
                        >
                          Reject
                        </button>
                      </>
                    )}
                  </>
                )}
                {w.kind === "reply" && (
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
                )}
              </li>
            ))}
          </ul>
          {s.status === "running" && (
            <div className="row">
              <button type="button" name="play" className="primary" disabled={!canAct || busy} onClick={() => play.mutate(input)}>
                {play.isPending ? "Playing…" : "Play to the end"}
              </button>
              <span className="small muted">
                Skips every wait, decides each approval ({Object.values(s.script.approvals).includes("reject") ? "as chosen" : "approve"}), and replies as chosen when the test run
                started.
              </span>
            </div>
          )}
          {play.data && (
            <div className="small" role="status" data-played={play.data.finished ? "finished" : "partly"}>
              {play.data.finished ? `Played to the end: the run ${play.data.status}.` : "Played as far as it could in one go: play again to go on."}
              <ol>
                {play.data.done.map((d) => (
                  <li key={d}>{d}</li>
                ))}
              </ol>
            </div>
          )}
          {!canAct && <p className="small muted">Only owners and editors can act on a test run.</p>}
        </>
      )}
      {error && <p className="field-error">{error.message}</p>}
    </section>
  );
}
