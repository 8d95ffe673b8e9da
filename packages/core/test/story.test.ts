import { describe, expect, it } from "vitest";
import { actorWords, attemptWords, buildStory, latenessWords, type StoryApproval, type StoryEvent, type StoryInput, type StoryStep, type StoryTimer, storyClock, usd } from "../src/run/runs/story";
import { failureWhy, parkedWhy } from "../src/run/runs/why";
import { parseGraph } from "../src/versions/graph";

/**
 * The run page's story, from rows shaped as the engine, the connectors, the timers, the approvals and the signals
 * write them (steps.output / steps.error, run_events.data), for Maya's follow-up: wait for 09:00 in the contact's
 * zone, draft, approve, send, wait for a reply, update the CRM.
 */
const graph = parseGraph({
  nodes: [
    { id: "form", kind: "trigger", config: { eventIdField: "id" } },
    { id: "notify", kind: "http_request", config: { url: "http://127.0.0.1:4000/hook", maxAttempts: 3 } },
    { id: "morning", kind: "wait", config: { rule: { kind: "next_weekday", at: "09:00" }, zoneFrom: "input.tz", zone: "Europe/Berlin" } },
    { id: "draft", kind: "model_draft", config: { connection: "model", prompt: "Write to {{contact.email}}" } },
    {
      id: "review",
      kind: "approval",
      config: {
        approvers: { users: ["sam@acme.test"] },
        title: "Email {{input.email}}?",
        content: "{{steps.draft.output.text}}",
        deadlineSeconds: 3600,
        onDeadline: { action: "default", decision: "approved" },
        slack: { connection: "slack", channel: "C1" },
      },
    },
    { id: "send", kind: "send_email", config: { connection: "mail", subject: "Thursday, {{input.name}}?", text: "{{steps.draft.output.text}}" } },
    { id: "await_reply", kind: "wait_for_reply", config: { replyTo: "send", timeoutSeconds: 3 * 86_400 } },
    { id: "is_pro", kind: "branch", config: { condition: { path: "input.plan", op: "eq", value: "pro" } } },
    { id: "crm", kind: "crm_upsert", config: { connection: "crm", object: "contact", fields: { email: "{{contact.email}}" } } },
    { id: "done", kind: "end" },
    { id: "no_reply", kind: "end" },
    { id: "dropped", kind: "end" },
  ],
  edges: [
    { from: "form", to: "notify" },
    { from: "notify", to: "morning" },
    { from: "morning", to: "draft" },
    { from: "draft", to: "review" },
    { from: "review", to: "send", label: "approved" },
    { from: "review", to: "dropped", label: "rejected" },
    { from: "send", to: "await_reply" },
    { from: "await_reply", to: "is_pro", label: "reply" },
    { from: "await_reply", to: "no_reply", label: "timeout" },
    { from: "is_pro", to: "crm", label: "true" },
    { from: "is_pro", to: "done", label: "false" },
    { from: "crm", to: "done" },
  ],
});

const t = (iso: string) => new Date(iso);
const start = t("2026-12-01T21:15:00Z");
const runId = "run_0123456789abcdef0123456789abcdef";

const step = (nodeId: string, kind: string, over: Partial<StoryStep>): StoryStep => ({
  id: `stp_${nodeId}_${over.iteration ?? 1}`,
  nodeId,
  iteration: 1,
  kind,
  status: "done",
  attempt: 1,
  maxAttempts: 1,
  deferrals: 0,
  availableAt: over.createdAt ?? start,
  output: null,
  error: null,
  createdAt: start,
  settledAt: null,
  ...over,
});
const ev = (type: string, at: Date, over: Partial<StoryEvent> = {}): StoryEvent => ({ at, type, stepId: null, nodeId: null, attempt: null, worker: null, data: null, ...over });

// 09:00 Berlin on Wednesday 2 December is 08:00 UTC.
const due = t("2026-12-02T08:00:00Z");
const notify = step("notify", "http_request", {
  attempt: 2,
  maxAttempts: 3,
  createdAt: start,
  settledAt: t("2026-12-01T21:15:01.200Z"),
  output: { status: 200, body: { ok: true } },
});
const morning = step("morning", "wait", {
  createdAt: t("2026-12-01T21:15:01.300Z"),
  settledAt: t("2026-12-02T08:00:00.100Z"),
  output: { dueAt: due.toISOString(), firedAt: "2026-12-02T08:00:00.100Z", latenessMs: 100.4 },
});
const morningTimer: StoryTimer = { stepId: morning.id, rule: { kind: "next_weekday", at: "09:00" }, zone: "Europe/Berlin", dueAt: due, firedAt: t("2026-12-02T08:00:00.100Z"), latenessMs: 100.4 };
const draft = step("draft", "model_draft", {
  maxAttempts: 2,
  createdAt: t("2026-12-02T08:00:00.200Z"),
  settledAt: t("2026-12-02T08:00:02Z"),
  output: { text: "Hi Lena, shall we talk on Thursday?", model: "gpt-4o-mini", usage: { input: 60, output: 30 }, costMicros: 27 },
});
const review = step("review", "approval", {
  createdAt: t("2026-12-02T08:00:02.100Z"),
  settledAt: t("2026-12-02T08:12:00Z"),
  output: { outcome: "reply", signalId: "sig_1", reply: { approvalId: "apr_1", decision: "approved", by: "usr_1", byName: "Sam", via: "slack", stage: 1 } },
});
const approval = (over: Partial<StoryApproval> = {}): StoryApproval => ({
  stepId: review.id,
  nodeId: "review",
  stage: 1,
  title: "Email lena@example.com?",
  approvers: { users: ["sam@acme.test"] },
  onDeadline: { action: "default", decision: "approved" },
  status: "approved",
  decidedByName: "Sam",
  decidedVia: "slack",
  decidedAt: t("2026-12-02T08:12:00Z"),
  deadlineAt: t("2026-12-02T09:00:02Z"),
  ...over,
});
const send = step("send", "send_email", {
  maxAttempts: 5,
  createdAt: t("2026-12-02T08:12:00.100Z"),
  settledAt: t("2026-12-02T08:12:01Z"),
  // As providers/effects/send-email.ts records it: what was sent, as sent.
  output: {
    messageId: "<hf.1@acme.test>",
    from: "Sam <sam@acme.test>",
    to: "lena@example.com",
    replyTo: "reply+tok1@in.acme.test",
    subject: "Thursday, Lena?",
    text: "Hi Lena, shall we talk on Thursday?",
    accepted: ["lena@example.com"],
    rejected: [],
    response: "250 OK",
    consentCheckedAt: "2026-12-02T08:12:00.500Z",
  },
});
/** A run sent before the send step recorded the email: only the Message-ID and the recipient. */
const sendBeforeRecords = { ...send, output: { messageId: "<hf.1@acme.test>", to: "lena@example.com", accepted: ["lena@example.com"], rejected: [], response: "250 OK" } };
const awaitReply = step("await_reply", "wait_for_reply", {
  createdAt: t("2026-12-02T08:12:01.100Z"),
  settledAt: t("2026-12-02T10:30:00Z"),
  output: { outcome: "reply", signalId: "sig_2", reply: { messageId: "<r1@example.com>", from: "Lena <lena@example.com>", to: null, subject: "Re: Thursday, Lena?", text: "Yes!" } },
});
const replyTimer: StoryTimer = { stepId: awaitReply.id, rule: { kind: "duration", seconds: 259_200 }, zone: "UTC", dueAt: t("2026-12-05T08:12:01.100Z"), firedAt: null, latenessMs: null };
const crm = step("crm", "crm_upsert", { maxAttempts: 5, createdAt: t("2026-12-02T10:30:00.100Z"), settledAt: t("2026-12-02T10:30:00.400Z"), output: { id: "rec_42", externalId: `${runId}/crm/1` } });

const timeline: StoryEvent[] = [
  ev("run.started", start),
  ev("step.scheduled", start, { stepId: notify.id, nodeId: "notify" }),
  ev("step.retry_scheduled", t("2026-12-01T21:15:00.300Z"), {
    stepId: notify.id,
    nodeId: "notify",
    attempt: 1,
    data: { code: "http_503", message: "POST http://127.0.0.1:4000/hook answered 503", status: 503, notPerformed: true, delayMs: 310 },
  }),
  ev("step.succeeded", notify.settledAt as Date, { stepId: notify.id, nodeId: "notify", attempt: 2 }),
  ev("timer.scheduled", morning.createdAt, { stepId: morning.id, nodeId: "morning", data: { zone: "Europe/Berlin", zoneSource: "run", dueAt: due.toISOString() } }),
  ev("timer.fired", morning.settledAt as Date, { stepId: morning.id, worker: "sweeper", data: { dueAt: due.toISOString(), latenessMs: 100.4 } }),
  ev("approval.requested", review.createdAt, { stepId: review.id, nodeId: "review" }),
  ev("approval.decided", review.settledAt as Date, { stepId: review.id, nodeId: "review", worker: "slack:usr_1", data: { decision: "approved", by: "Sam", via: "slack" } }),
  ev("reply.awaited", awaitReply.createdAt, { stepId: awaitReply.id, nodeId: "await_reply" }),
  ev("signal.consumed", awaitReply.settledAt as Date, { stepId: awaitReply.id, nodeId: "await_reply" }),
  ev("branch.evaluated", crm.createdAt, { nodeId: "is_pro", data: { result: true } }),
  ev("run.completed", t("2026-12-02T10:30:00.500Z"), { nodeId: "done" }),
];

const completed = (over: Partial<StoryInput> = {}): StoryInput => ({
  run: {
    id: runId,
    status: "completed",
    input: { id: "lead-1", email: "lena@example.com", name: "Lena", tz: "Europe/Berlin", plan: "pro" },
    error: null,
    cancelRequestedAt: null,
    cancelReason: null,
    createdAt: start,
    finishedAt: t("2026-12-02T10:30:00.500Z"),
  },
  steps: [notify, morning, draft, review, send, awaitReply, crm],
  timeline,
  timers: [morningTimer, replyTimer],
  approvals: [approval()],
  signals: [{ kind: "email_reply", stepId: awaitReply.id, receivedAt: t("2026-12-02T10:29:59Z"), consumedAt: t("2026-12-02T10:30:00Z"), payload: {}, unmatchedReason: null }],
  graph,
  contact: { email: "lena@example.com", timeZone: "Europe/Berlin" },
  viewerZone: "UTC",
  ...over,
});

const texts = (input: StoryInput) => buildStory(input).sentences.map((s) => s.text);

describe("the story of a completed run", () => {
  it("has one sentence per step taken, in the order taken, with times in the viewer's zone and the contact's beside", () => {
    expect(texts(completed())).toEqual([
      "POST 127.0.0.1:4000/hook answered 200 on attempt 2 of 3 (attempt 1 answered 503 (unavailable))",
      "Waited until Wed 2 Dec 09:00 Europe/Berlin (your time 08:00 UTC), fired 0.1 s late",
      "Draft by gpt-4o-mini, 90 tokens, $0.000027",
      "Approved by Sam in Slack at Wed 2 Dec 08:12 UTC (contact's time 09:12 Europe/Berlin)",
      'Email to lena@example.com "Thursday, Lena?" accepted by the server at Wed 2 Dec 08:12 UTC (contact\'s time 09:12 Europe/Berlin)',
      'Reply received from Lena <lena@example.com> at Wed 2 Dec 10:29 UTC (contact\'s time 11:29 Europe/Berlin): "Re: Thursday, Lena?"',
      'Took the true path at "is_pro" (input.plan is "pro")',
      "CRM contact rec_42 created or updated",
    ]);
    const story = buildStory(completed());
    expect(story.status).toEqual({ state: "completed", text: "Completed Wed 2 Dec 10:30 UTC (contact's time 11:30 Europe/Berlin) after 13 hours 15 minutes.", todo: null, actions: [], stepId: null });
  });

  it("highlights the path taken: trigger, each step, the branch, the end reached, and the edges between", () => {
    const { path } = buildStory(completed());
    expect(path.nodes).toEqual(["form", "notify", "morning", "draft", "review", "send", "await_reply", "is_pro", "crm", "done"]);
    expect(path.edges).toEqual([
      "form->notify",
      "notify->morning",
      "morning->draft",
      "draft->review",
      "review->send",
      "send->await_reply",
      "await_reply->is_pro",
      "is_pro->crm",
      "crm->done",
    ]);
  });

  it("shows the sent email as the send step recorded it: subject, body, from, Reply-To and Message-ID", () => {
    expect(buildStory(completed()).email).toEqual({
      nodeId: "send",
      source: "recorded",
      to: "lena@example.com",
      from: "Sam <sam@acme.test>",
      replyTo: "reply+tok1@in.acme.test",
      messageId: "<hf.1@acme.test>",
      subject: "Thursday, Lena?",
      body: "Hi Lena, shall we talk on Thursday?",
      html: null,
      sentAt: send.settledAt,
    });
  });

  it("reads the record, not the templates: data changed since the send does not change the email shown", () => {
    // The templates would now render "Thursday, Lena-Marie?" and the draft's new text; the record says what went out.
    const redrafted = { ...draft, output: { ...(draft.output as object), text: "A different draft" } };
    const story = buildStory(completed({ steps: [notify, morning, redrafted, review, send, awaitReply, crm], run: { ...completed().run, input: { ...(completed().run.input as object), name: "Lena-Marie" } } }));
    expect(story.email).toMatchObject({ source: "recorded", subject: "Thursday, Lena?", body: "Hi Lena, shall we talk on Thursday?" });
    expect(story.sentences[4]?.text).toMatch(/^Email to lena@example\.com "Thursday, Lena\?" accepted by the server at /);
    // An HTML-only email: the body shown is the HTML as sent (escaped values and all).
    const htmlOnly = { ...send, output: { ...(send.output as object), text: undefined, html: "<p>Hi &lt;Lena&gt;</p>" } };
    expect(buildStory(completed({ steps: [notify, morning, draft, review, htmlOnly] })).email).toMatchObject({ source: "recorded", body: "<p>Hi &lt;Lena&gt;</p>", html: "<p>Hi &lt;Lena&gt;</p>" });
  });

  it("an older run without a recorded email is reconstructed from the templates, and says so", () => {
    const story = buildStory(completed({ steps: [notify, morning, draft, review, sendBeforeRecords, awaitReply, crm] }));
    expect(story.email).toEqual({
      nodeId: "send",
      source: "reconstructed",
      to: "lena@example.com",
      from: null,
      replyTo: null,
      messageId: "<hf.1@acme.test>",
      subject: "Thursday, Lena?",
      body: "Hi Lena, shall we talk on Thursday?",
      html: null,
      sentAt: send.settledAt,
    });
  });

  it("an erased contact's email shows nothing of what was sent", () => {
    const erased = { ...send, output: { erased: true } };
    const story = buildStory(completed({ steps: [notify, morning, draft, review, erased], timeline: timeline.slice(0, 8), contact: { email: "sha256:ab12", timeZone: null } }));
    expect(story.email).toMatchObject({ source: "erased", to: "", subject: "", body: "", html: null, messageId: null });
    expect(story.sentences.at(-1)?.text).toMatch(/^Email to the contact accepted by the server at /);
  });

  it("in a viewer's zone equal to the contact's, says each time once", () => {
    const story = buildStory(completed({ viewerZone: "Europe/Berlin" }));
    expect(story.sentences[1]?.text).toBe("Waited until Wed 2 Dec 09:00 Europe/Berlin, fired 0.1 s late");
    expect(story.sentences[3]?.text).toBe("Approved by Sam in Slack at Wed 2 Dec 09:12 Europe/Berlin");
  });

  it("approved in the inbox; a reply that never came takes the timeout path", () => {
    const timedOut = { ...awaitReply, settledAt: t("2026-12-05T08:12:01.200Z"), output: { dueAt: "2026-12-05T08:12:01.100Z", firedAt: "2026-12-05T08:12:01.200Z", latenessMs: 100 } };
    const story = buildStory(
      completed({
        steps: [notify, morning, draft, review, send, timedOut],
        approvals: [approval({ decidedVia: "inbox" })],
        signals: [],
        timeline: [...timeline.slice(0, 9), ev("timer.fired", timedOut.settledAt, { stepId: timedOut.id }), ev("run.completed", t("2026-12-05T08:12:01.300Z"), { nodeId: "no_reply" })],
        run: { ...completed().run, finishedAt: t("2026-12-05T08:12:01.300Z") },
      }),
    );
    const sentences = story.sentences.map((s) => s.text);
    expect(sentences).toContain("Approved by Sam in the inbox at Wed 2 Dec 08:12 UTC (contact's time 09:12 Europe/Berlin)");
    expect(sentences.at(-1)).toBe("Took the timeout path because no reply came by Sat 5 Dec 08:12 UTC (contact's time 09:12 Europe/Berlin)");
    expect(story.path.nodes.slice(-2)).toEqual(["await_reply", "no_reply"]);
    expect(story.path.edges.at(-1)).toBe("await_reply->no_reply");
  });

  it("approved by default when nobody decided by the deadline", () => {
    const story = buildStory(completed({ approvals: [approval({ decidedVia: "deadline", decidedByName: "the deadline (default decision)", decidedAt: t("2026-12-02T09:00:02Z") })] }));
    expect(story.sentences[3]?.text).toBe("Approved by default: nobody decided by Wed 2 Dec 09:00 UTC (contact's time 10:00 Europe/Berlin)");
  });

  it("an email skipped for an unsubscribed contact says so and shows no sent email", () => {
    const skipped = { ...send, output: { skipped: true, reason: "suppressed: unsubscribed", to: "lena@example.com", consentCheckedAt: "2026-12-02T08:12:00.500Z" } };
    const story = buildStory(completed({ steps: [notify, morning, draft, review, skipped], timeline: timeline.slice(0, 8) }));
    expect(story.sentences.map((s) => [s.text, s.tone]).at(-1)).toEqual(["Email to lena@example.com not sent: suppressed: unsubscribed", "warning"]);
    expect(story.email).toBeNull();
  });
});

describe("the status sentence", () => {
  const running = (over: Partial<StoryInput>): StoryInput => completed({ run: { ...completed().run, status: "running", finishedAt: null }, ...over });

  it("waiting for 09:00 in the contact's zone: until when, in their zone with the viewer's beside", () => {
    const waiting = { ...morning, status: "waiting", settledAt: null, output: null };
    const story = buildStory(running({ steps: [notify, waiting], timers: [{ ...morningTimer, firedAt: null, latenessMs: null }], timeline: timeline.slice(0, 5), approvals: [], signals: [] }));
    expect(story.status).toMatchObject({ state: "waiting", text: "Waiting until Wed 2 Dec 09:00 Europe/Berlin (your time 08:00 UTC).", actions: [], stepId: waiting.id });
    expect(story.path.nodes).toEqual(["form", "notify", "morning"]);
  });

  it("a wait whose contact had no zone says UTC was used", () => {
    const waiting = { ...morning, status: "waiting", settledAt: null, output: null };
    const scheduled = ev("timer.scheduled", morning.createdAt, { stepId: morning.id, data: { zone: "UTC", zoneSource: "default" } });
    const story = buildStory(running({ steps: [waiting], timers: [{ ...morningTimer, zone: "UTC", dueAt: t("2026-12-02T09:00:00Z") }], timeline: [scheduled], contact: { email: "lena@example.com", timeZone: null }, approvals: [], signals: [] }));
    expect(story.status.text).toBe("Waiting until Wed 2 Dec 09:00 UTC (no time zone known for the contact: UTC was used).");
  });

  it("waiting for an approval: who, what, by when, and where to decide", () => {
    const pending = { ...review, status: "waiting", settledAt: null, output: null };
    const story = buildStory(running({ steps: [notify, morning, draft, pending], approvals: [approval({ status: "pending", decidedByName: null, decidedVia: null, decidedAt: null })] }));
    expect(story.status).toMatchObject({
      state: "waiting",
      text: 'Waiting for sam@acme.test to approve "Email lena@example.com?" by Wed 2 Dec 09:00 UTC (contact\'s time 10:00 Europe/Berlin).',
      todo: "Decide in the approvals inbox (or in Slack where it was posted).",
      actions: ["decide"],
    });
  });

  it("waiting for a reply names the recipient and the deadline", () => {
    const waiting = { ...awaitReply, status: "waiting", settledAt: null, output: null };
    const story = buildStory(running({ steps: [notify, morning, draft, review, send, waiting], signals: [] }));
    expect(story.status.text).toBe("Waiting for a reply from lena@example.com until Sat 5 Dec 08:12 UTC (contact's time 09:12 Europe/Berlin).");
  });

  it("an HTTP call between retries: what the last attempt got and when the next one is", () => {
    const retrying = { ...notify, status: "ready", attempt: 1, settledAt: null, availableAt: t("2026-12-01T21:15:30Z"), error: { code: "http_503", message: "answered 503", status: 503 } };
    const story = buildStory(running({ steps: [retrying], timeline: timeline.slice(0, 3), contact: null }));
    expect(story.status).toMatchObject({ state: "running", text: 'HTTP request "notify": attempt 1 answered 503 (unavailable); trying again at Tue 1 Dec 21:15 UTC (attempt 2 of 3).' });
  });

  it("failed after its retries: why in words, what to do, and the retry button", () => {
    const failed = {
      ...notify,
      status: "failed",
      attempt: 3,
      error: { code: "http_503", message: "POST http://127.0.0.1:4000/hook answered 503", status: 503, notPerformed: true, exhausted: true, attempts: 3 },
    };
    const story = buildStory(
      completed({
        run: { ...completed().run, status: "failed", error: { reason: "step notify failed", nodeId: "notify" } },
        steps: [failed],
        timeline: [...timeline.slice(0, 3), ev("step.retry_scheduled", t("2026-12-01T21:15:01Z"), { stepId: notify.id, data: { code: "http_503" } })],
      }),
    );
    expect(story.status).toEqual({
      state: "failed",
      text: 'Failed at HTTP request "notify" on attempt 3 of 3: gave up after 3 attempts; the last one answered 503 (unavailable).',
      todo: "Check that the service is up (its status page, or the address in the step), then use Retry from the failed step.",
      actions: ["retry"],
      stepId: failed.id,
    });
    expect(story.sentences.map((s) => s.tone)).toEqual(["failed"]);
  });

  it("failed at once on a 404 or a missing variable, with what to fix", () => {
    expect(failureWhy({ code: "http_404", message: "POST x answered 404", status: 404, permanent: true })).toEqual({
      what: "the service answered 404 (not found), which another attempt would not change",
      todo: "check the address in the step, publish the fix, then Run again with the same input (a retry would use this run's version, without the fix)",
    });
    expect(failureWhy({ code: "template_error", message: '"input.name" is not in the payload', permanent: true }).what).toBe('a variable in the step\'s text has no value ("input.name" is not in the payload)');
    expect(failureWhy({ code: "missing_connection", message: 'no smtp connection named "mail"' }).todo).toBe("add it in Settings -> Connections, then use Retry from the failed step");
  });

  it("parked for review: why, what to do, and the resolve form", () => {
    const parked = {
      ...send,
      status: "parked",
      settledAt: null,
      output: null,
      error: { code: "needs_review", message: "effect k may or may not have happened", reason: "effect k may or may not have happened", key: `${runId}/send/1`, attempts: 1 },
    };
    const story = buildStory(completed({ run: { ...completed().run, status: "running", finishedAt: null }, steps: [notify, morning, draft, review, parked] }));
    expect(story.status).toEqual({
      state: "needs_review",
      text: `Needs review at Send email "send": the outside call may or may not have happened (request id ${runId}/send/1), and the service cannot tell a repeat from a new one.`,
      todo: "Check the service, then say what you found: it happened, send it again (marked as the same request), or abandon the step.",
      actions: ["resolve"],
      stepId: parked.id,
    });
  });

  it("parked on the model budget: raise it, then resume", () => {
    const parked = { ...draft, status: "parked", settledAt: null, output: null, error: { code: "budget_exhausted", message: "m", reason: "m", estimateMicros: 1_250 } };
    const story = buildStory(completed({ run: { ...completed().run, status: "running", finishedAt: null }, steps: [notify, morning, parked] }));
    expect(story.status).toMatchObject({
      state: "parked",
      text: 'On hold at Draft with AI "draft": the organisation\'s model budget cannot cover this draft (up to $0.0013).',
      todo: "Raise the model budget, then Resume.",
      actions: ["raise_budget", "resume"],
    });
  });

  it("parked on a refused mailbox login: reconnect, then resume", () => {
    const error = { code: "needs_reconnect", message: 'x', reason: '"mail" refused our credentials: reconnect it (Invalid login)', connection: "mail", connectionId: "cnx_1" };
    expect(parkedWhy(error, usd)).toEqual({ what: '"mail" refused our credentials: reconnect it (Invalid login)', todo: 'fix "mail" in Settings -> Connections, then Resume' });
    const parked = { ...send, status: "parked", settledAt: null, output: null, error };
    expect(buildStory(completed({ run: { ...completed().run, status: "running", finishedAt: null }, steps: [parked] })).status.actions).toEqual(["reconnect", "resume"]);
  });

  it("stopped by the step budget", () => {
    const story = buildStory(
      completed({
        run: { ...completed().run, status: "failed", error: { reason: "step budget: 3 steps executed, the limit is 3", nodeId: "review", budget: "steps" } },
        steps: [notify, morning, draft],
      }),
    );
    expect(story.status).toMatchObject({
      state: "failed",
      text: "Stopped by its step budget: 3 steps executed, the limit is 3.",
      todo: "If the run should go further, raise the automation's run budget, then run it again.",
      actions: ["retry"],
    });
  });

  it("stopped because nobody approved in time", () => {
    const expired = { ...review, output: { dueAt: "2026-12-02T09:00:02Z", firedAt: "2026-12-02T09:00:02.050Z", latenessMs: 50 } };
    const story = buildStory(
      completed({
        run: { ...completed().run, status: "failed", error: { reason: "approval review: the deadline passed with no decision", nodeId: "review" } },
        steps: [notify, morning, draft, expired],
        timeline: timeline.slice(0, 7),
        approvals: [approval({ status: "expired", decidedVia: "deadline", decidedByName: "the deadline", decidedAt: t("2026-12-02T09:00:02Z") })],
      }),
    );
    expect(story.status.text).toBe('Stopped: nobody decided "Email lena@example.com?" by Wed 2 Dec 09:00 UTC (contact\'s time 10:00 Europe/Berlin).');
    expect(story.sentences.at(-1)?.text).toBe("Nobody decided by Wed 2 Dec 09:00 UTC (contact's time 10:00 Europe/Berlin): the run stopped there");
  });

  it("cancelled: by whom, when and why, and that nothing was undone", () => {
    const stopped = { ...morning, status: "cancelled", settledAt: t("2026-12-01T22:00:00Z"), output: null };
    const story = buildStory(
      completed({
        run: { ...completed().run, status: "cancelled", cancelRequestedAt: t("2026-12-01T22:00:00Z"), cancelReason: "Maya replied on the phone", finishedAt: t("2026-12-01T22:00:00Z") },
        steps: [notify, stopped],
        timeline: [...timeline.slice(0, 5), ev("run.cancel_requested", t("2026-12-01T22:00:00Z"), { worker: "user:sam@acme.test", data: { reason: "Maya replied on the phone" } })],
      }),
    );
    expect(story.status).toMatchObject({
      state: "cancelled",
      text: 'Cancelled by sam@acme.test Tue 1 Dec 22:00 UTC (contact\'s time 23:00 Europe/Berlin): "Maya replied on the phone".',
      todo: "Nothing was undone: what the run had already sent or written stays as it is.",
    });
    expect(story.sentences.map((s) => s.text).slice(-2)).toEqual([
      "Was waiting until Wed 2 Dec 09:00 Europe/Berlin (your time 08:00 UTC) when the run stopped",
      'Cancel requested by sam@acme.test at Tue 1 Dec 22:00 UTC (contact\'s time 23:00 Europe/Berlin): "Maya replied on the phone"',
    ]);
  });
});

describe("words", () => {
  it("counts real attempts (deferrals are not attempts): never '3/2'", () => {
    expect(attemptWords({ attempt: 3, maxAttempts: 2, deferrals: 1 })).toBe("attempt 2 of 2");
    expect(attemptWords({ attempt: 2, maxAttempts: 3 })).toBe("attempt 2 of 3");
    expect(attemptWords({ attempt: 0, maxAttempts: 1 })).toBe("attempt 1 of 1");
  });

  it("money, lateness and actors", () => {
    expect([usd(27), usd(0), usd(40), usd(1_250), usd(2_500_000)]).toEqual(["$0.000027", "$0", "$0.00004", "$0.0013", "$2.50"]);
    expect([latenessWords(100.4), latenessWords(3), latenessWords(90_000), latenessWords(null)]).toEqual(["fired 0.1 s late", "fired on time", "fired 1 minute 30 seconds late", "fired"]);
    expect([actorWords("user:sam@acme.test"), actorWords("cli:ops"), actorWords("sweeper"), actorWords(null)]).toEqual(["sam@acme.test", "ops (CLI)", "sweeper", "someone"]);
  });

  it("an unknown viewer zone reads as UTC; a different calendar day shows the day beside", () => {
    const clock = storyClock("Not/AZone", "Asia/Tokyo");
    expect(clock.viewer).toBe("UTC");
    expect(clock.when(t("2026-12-02T20:30:00Z"))).toBe("Wed 2 Dec 20:30 UTC (contact's time Thu 3 Dec 05:30 Asia/Tokyo)");
    expect(storyClock("America/New_York", null).whenIn(t("2026-12-02T08:00:00Z"), "Europe/Berlin")).toBe("Wed 2 Dec 09:00 Europe/Berlin (your time 03:00 America/New_York)");
  });
});

describe("short waits and single attempts", () => {
  it("a duration wait reads in the viewer's zone (it is nobody's local time); one attempt is not 'attempts'", () => {
    const nap = step("nap", "wait", { createdAt: t("2026-12-01T21:15:00Z"), settledAt: t("2026-12-01T21:15:01.020Z"), output: { dueAt: "2026-12-01T21:15:01Z", latenessMs: 20 } });
    const story = buildStory({
      ...completed(),
      steps: [nap],
      timeline: [],
      timers: [{ stepId: nap.id, rule: { kind: "duration", seconds: 1 }, zone: "UTC", dueAt: t("2026-12-01T21:15:01Z"), firedAt: t("2026-12-01T21:15:01.020Z"), latenessMs: 20 }],
    });
    expect(story.sentences[0]?.text).toBe("Waited 1 second, until Tue 1 Dec 21:15 UTC (contact's time 22:15 Europe/Berlin), fired on time");
    expect(failureWhy({ code: "network", message: "connect ECONNREFUSED", exhausted: true, attempts: 1 }).what).toBe("its only attempt could not connect");
  });
});

describe("holds and warnings along the way", () => {
  it("a send that was on hold twice and resumed tells both holds and who resumed it, then the send", () => {
    const hold = (at: string) =>
      ev("step.parked", t(at), {
        stepId: send.id,
        nodeId: "send",
        data: { code: "needs_reconnect", message: "m", reason: 'the mailbox "mail" refused our login: reconnect it (535)', connection: "mail" },
      });
    const story = buildStory(
      completed({
        steps: [notify, morning, draft, review, { ...send, settledAt: t("2026-12-02T08:30:01Z") }],
        timeline: [
          ...timeline.slice(0, 8),
          hold("2026-12-02T08:12:00.200Z"),
          ev("step.resumed", t("2026-12-02T08:20:00Z"), { stepId: send.id, nodeId: "send", worker: "user:sam@acme.test" }),
          hold("2026-12-02T08:20:00.300Z"),
          ev("step.resumed", t("2026-12-02T08:30:00Z"), { stepId: send.id, nodeId: "send", worker: "user:sam@acme.test" }),
        ],
      }),
    );
    expect(story.sentences.slice(4).map((s) => s.text)).toEqual([
      'Send email "send" was on hold: the mailbox "mail" refused our login: reconnect it (535)',
      "Resumed by sam@acme.test at Wed 2 Dec 08:20 UTC (contact's time 09:20 Europe/Berlin)",
      'Send email "send" was on hold: the mailbox "mail" refused our login: reconnect it (535)',
      "Resumed by sam@acme.test at Wed 2 Dec 08:30 UTC (contact's time 09:30 Europe/Berlin)",
      'Email to lena@example.com "Thursday, Lena?" accepted by the server at Wed 2 Dec 08:30 UTC (contact\'s time 09:30 Europe/Berlin)',
    ]);
  });

  it("a parked step's current hold is told once (by its own sentence); an unknown zone is a warning", () => {
    const parked = { ...send, status: "parked", settledAt: null, output: null, error: { code: "needs_reconnect", message: "m", reason: "r", connection: "mail" } };
    const story = buildStory(
      completed({
        run: { ...completed().run, status: "running", finishedAt: null },
        steps: [parked],
        timeline: [
          ev("timer.zone_unknown", t("2026-12-01T21:15:01Z"), { nodeId: "morning", data: { given: "Mars/Olympus", fallback: "Europe/Berlin", message: 'The trigger\'s time zone "Mars/Olympus" is not a time zone; the wait counts in Europe/Berlin.' } }),
          ev("step.parked", t("2026-12-02T08:12:00.200Z"), { stepId: send.id, nodeId: "send", data: parked.error }),
        ],
      }),
    );
    expect(story.sentences.map((s) => [s.text, s.tone])).toEqual([
      ['The trigger\'s time zone "Mars/Olympus" is not a time zone; the wait counts in Europe/Berlin.', "warning"],
      ['Send email "send" is on hold: r', "warning"],
    ]);
  });
});

describe("refused decisions", () => {
  it("a click the approval refused (a member who may not decide) is told, and the decision that counted after it", () => {
    const refused = ev("approval.refused", t("2026-12-02T08:05:00Z"), {
      stepId: review.id,
      nodeId: "review",
      worker: "slack:usr_2",
      data: { decision: "approved", by: "Eve", via: "slack", reason: "not_an_approver", message: "Eve may not decide this approval" },
    });
    const story = buildStory(completed({ steps: [notify, morning, draft, review], timeline: [...timeline.slice(0, 7), refused, timeline[7] as StoryEvent] }));
    expect(story.sentences.slice(3).map((s) => s.text)).toEqual([
      "Eve's approval in Slack at Wed 2 Dec 08:05 UTC (contact's time 09:05 Europe/Berlin) was not recorded: Eve may not decide this approval",
      "Approved by Sam in Slack at Wed 2 Dec 08:12 UTC (contact's time 09:12 Europe/Berlin)",
    ]);
  });
});

describe("a run whose timeline was removed (retention)", () => {
  it("still tells every step from the record, says why the details are gone, and keeps its status", () => {
    const removed = ev("timeline.removed", t("2027-01-02T03:00:00Z"), { worker: "sweeper", data: { retentionDays: 30 } });
    const story = buildStory(completed({ timeline: [removed] }));
    expect(story.sentences.map((s) => s.text)).toEqual([
      // What the timeline added is gone (the failed first attempt, the branch taken); the steps' own rows remain.
      "POST 127.0.0.1:4000/hook answered 200",
      "Waited until Wed 2 Dec 09:00 Europe/Berlin (your time 08:00 UTC), fired 0.1 s late",
      "Draft by gpt-4o-mini, 90 tokens, $0.000027",
      "Approved by Sam in Slack at Wed 2 Dec 08:12 UTC (contact's time 09:12 Europe/Berlin)",
      'Email to lena@example.com "Thursday, Lena?" accepted by the server at Wed 2 Dec 08:12 UTC (contact\'s time 09:12 Europe/Berlin)',
      'Reply received from Lena <lena@example.com> at Wed 2 Dec 10:29 UTC (contact\'s time 11:29 Europe/Berlin): "Re: Thursday, Lena?"',
      "CRM contact rec_42 created or updated",
      "The timeline of this run was removed after 30 days (retention).",
    ]);
    expect(story.status.state).toBe("completed");
    expect(story.email?.subject).toBe("Thursday, Lena?");
  });
});
