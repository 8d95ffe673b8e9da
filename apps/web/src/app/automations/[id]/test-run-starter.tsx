"use client";

import { useMutation } from "@tanstack/react-query";
import Link from "next/link";
import { useState } from "react";
import { useTRPC } from "../../../server/trpc/client";

/** The answers a tester can give a simulated call, in words. */
const callAnswers = {
  ok: { label: "Succeeds (200)", status: 200 },
  fail: { label: "Fails (500: retried, then fails)", status: 500 },
  refused: { label: "Refuses the credentials (401)", status: 401 },
  missing: { label: "Not found (404)", status: 404 },
} as const;
type CallChoice = keyof typeof callAnswers;

/** A test run's choices, as the tester sets them. */
function useTestRunChoices() {
  const [calls, setCalls] = useState<Record<string, CallChoice>>({});
  const [approvals, setApprovals] = useState<Record<string, "approve" | "reject">>({});
  const [replies, setReplies] = useState<Record<string, string>>({});
  const [modelCalls, setModelCalls] = useState(true);
  const [sendToMe, setSendToMe] = useState(false);
  const [clockStartsAt, setClockStartsAt] = useState("");
  return { calls, setCalls, approvals, setApprovals, replies, setReplies, modelCalls, setModelCalls, sendToMe, setSendToMe, clockStartsAt, setClockStartsAt };
}

type TestRunChoices = ReturnType<typeof useTestRunChoices>;

/**
 * Test run with its choices: how each simulated call answers (to try the error paths), whether the model is called
 * (trying the wording is the point; it counts against the model budget), a copy of every email to the tester, and
 * for "Play to the end" on the run's page, each approval's decision and whether each reply comes.
 */
export function TestRunStarter({ orgSlug, automationId, canEdit, steps }: { orgSlug: string; automationId: string; canEdit: boolean; steps: { id: string; kind: string }[] }) {
  const trpc = useTRPC();
  const testRun = useMutation(trpc.triggers.testRun.mutationOptions());
  const c = useTestRunChoices();
  const { calls, replies, clockStartsAt } = c;

  const start = () =>
    testRun.mutate({
      orgSlug,
      automationId,
      sendToMe: c.sendToMe,
      // A datetime-local value is in this browser's zone; empty: the clock starts now.
      ...(clockStartsAt ? { clockStartsAt: new Date(clockStartsAt) } : {}),
      script: {
        calls: Object.fromEntries(Object.entries(calls).map(([id, choice]) => [id, { status: callAnswers[choice].status, body: {} }])),
        modelCalls: c.modelCalls,
        approvals: c.approvals,
        replies: Object.fromEntries(Object.entries(replies).map(([id, text]) => [id, text.trim() === "" ? ("none" as const) : { text: text.trim() }])),
      },
    });

  return (
    <div className="stack test-run-starter">
      <TestRunChoicesForm c={c} steps={steps} />
      <div className="row">
        <button
          type="button"
          name="test-run"
          disabled={!canEdit || testRun.isPending}
          title={canEdit ? "Play the published version with the sample: nothing is sent to anyone" : "Only owners and editors can start test runs"}
          onClick={start}
        >
          {testRun.isPending ? "Starting…" : "Test run"}
        </button>
      </div>
      {testRun.data && (
        <p className="small" role="status">
          Test run started: <Link href={`/runs/${testRun.data.runId}`}>open it</Link> to skip its waits, decide its approvals or play it to the end.
        </p>
      )}
      {testRun.error && <p className="field-error">{testRun.error.message}</p>}
    </div>
  );
}

/** The choices, folded away: each call's answer, each approval's decision, each reply, the model, the clock, a copy to me. */
function TestRunChoicesForm({ c, steps }: { c: TestRunChoices; steps: { id: string; kind: string }[] }) {
  const { calls, approvals, replies } = c;
  const callSteps = steps.filter((s) => s.kind === "http_request" || s.kind === "crm_upsert");
  const approvalSteps = steps.filter((s) => s.kind === "approval");
  const replySteps = steps.filter((s) => s.kind === "wait_for_reply");
  const hasModel = steps.some((s) => s.kind === "model_draft");
  return (
    <details className="more-settings">
      <summary>Test run choices</summary>
      <div className="stack small">
        {callSteps.map((s) => (
          <label key={s.id}>
            When “{s.id}” calls out
            <select name={`answer-${s.id}`} value={calls[s.id] ?? "ok"} onChange={(e) => c.setCalls({ ...calls, [s.id]: e.target.value as CallChoice })}>
              {Object.entries(callAnswers).map(([k, a]) => (
                <option key={k} value={k}>
                  {a.label}
                </option>
              ))}
            </select>
          </label>
        ))}
        {approvalSteps.map((s) => (
          <label key={s.id}>
            Play to the end decides “{s.id}”
            <select name={`decision-${s.id}`} value={approvals[s.id] ?? "approve"} onChange={(e) => c.setApprovals({ ...approvals, [s.id]: e.target.value as "approve" | "reject" })}>
              <option value="approve">Approve</option>
              <option value="reject">Reject</option>
            </select>
          </label>
        ))}
        {replySteps.map((s) => (
          <label key={s.id}>
            Reply at “{s.id}” (empty: no reply comes)
            <input name={`reply-${s.id}`} value={replies[s.id] ?? "Yes, I'm interested: tell me more."} onChange={(e) => c.setReplies({ ...replies, [s.id]: e.target.value })} />
          </label>
        ))}
        {hasModel && (
          <label className="inline">
            <input type="checkbox" name="model-calls" checked={c.modelCalls} onChange={(e) => c.setModelCalls(e.target.checked)} /> Call the model (counts against the model
            budget; off: a canned draft)
          </label>
        )}
        <label>
          Start the run's clock at (empty: now; your time zone)
          <input type="datetime-local" name="clock-starts-at" value={c.clockStartsAt} onChange={(e) => c.setClockStartsAt(e.target.value)} />
        </label>
        <label className="inline">
          <input type="checkbox" name="send-to-me" checked={c.sendToMe} onChange={(e) => c.setSendToMe(e.target.checked)} /> Send me a copy of each email (marked [Test];
          never to the contact)
        </label>
      </div>
    </details>
  );
}
