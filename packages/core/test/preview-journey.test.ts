import { describe, expect, it } from "vitest";
import { renderEmail } from "../src/people/approvals/email";
import { previewJourney } from "../src/run/preview/journey";
import { dueInstant } from "../src/decide/timers/schedule";
import { type Graph, graphSchema } from "../src/versions/graph";

/** The editor's preview, pure: a graph and a sample in, what each step would do out. No database. */

const graph: Graph = graphSchema.parse({
  nodes: [
    { id: "trigger", kind: "trigger", config: { contactEmailField: "email", contactTimeZoneField: "tz" } },
    { id: "morning", kind: "wait", config: { rule: { kind: "next_weekday", at: "09:00" }, zoneFrom: "input.tz", zone: "UTC" } },
    { id: "is_pro", kind: "branch", config: { condition: { path: "input.plan", op: "eq", value: "pro" } } },
    { id: "draft", kind: "model_draft", config: { connection: "gpt", prompt: "Write to {{input.first_name}} at {{input.company}}." } },
    { id: "ok", kind: "approval", config: { approvers: { users: ["sam@acme.test"] }, title: "Send to {{contact.email}}?", email: "send", deadlineSeconds: 86_400 } },
    {
      id: "send",
      kind: "send_email",
      config: { connection: "smtp", subject: "Hello {{input.first_name}} from {{input.company}}", text: "Hi {{input.first_name}},\n{{steps.draft.output.text}}", html: "<p>{{input.first_name}}</p>" },
    },
    { id: "reply", kind: "wait_for_reply", config: { replyTo: "send", timeoutSeconds: 3 * 86_400 } },
    { id: "crm", kind: "crm_upsert", config: { connection: "crm", object: "contact", fields: { plan: "{{input.plan}}", replied: "{{steps.reply.output.outcome}}" } } },
    { id: "done", kind: "end" },
    { id: "basic", kind: "end" },
    { id: "no_reply", kind: "end" },
    { id: "rejected", kind: "end" },
  ],
  edges: [
    { from: "trigger", to: "morning" },
    { from: "morning", to: "is_pro" },
    { from: "is_pro", to: "draft", label: "true" },
    { from: "is_pro", to: "basic", label: "false" },
    { from: "draft", to: "ok" },
    { from: "ok", to: "send", label: "approved" },
    { from: "ok", to: "rejected", label: "rejected" },
    { from: "send", to: "reply" },
    { from: "reply", to: "crm", label: "reply" },
    { from: "reply", to: "no_reply", label: "timeout" },
    { from: "crm", to: "done" },
  ],
});

const connections = [
  { name: "crm", kind: "crm", config: { baseUrl: "https://crm.example.test/v2" } },
  { name: "gpt", kind: "model", config: { baseUrl: "https://models.example.test/v1", model: "mini", inputMicrosPerMTok: 1, outputMicrosPerMTok: 1 } },
];
// Friday 23 October 2026, 12:00 in Berlin (summer time); the clocks go back on Sunday the 25th.
const friday = new Date("2026-10-23T10:00:00Z");
const sample = { input: { email: "Ann@Example.test", tz: "Europe/Berlin", plan: "pro", first_name: "Ann", company: "Acme" } };

describe("previewJourney", () => {
  it("walks the path a run would take, each step saying what it would do", () => {
    const p = previewJourney(graph, sample, friday, { connections });
    expect(p.steps.map((s) => s.nodeId)).toEqual(["trigger", "morning", "is_pro", "draft", "ok", "send", "reply", "crm", "done"]);
    expect(p.outcome.kind).toBe("completed");
    expect(p.missing).toEqual([]);
    expect(p.steps[0]?.detail).toEqual({ kind: "trigger", contact: { email: "ann@example.test", timeZone: "Europe/Berlin", consent: "unknown" } });
  });

  it("renders the email exactly as renderEmail does, with the model's draft as a placeholder", () => {
    const p = previewJourney(graph, sample, friday, { connections });
    const send = p.steps.find((s) => s.nodeId === "send");
    const expected = renderEmail(graph.nodes.find((n) => n.id === "send")?.config as never, {
      input: sample.input,
      contact: { id: "(the contact)", email: "ann@example.test", time_zone: "Europe/Berlin", consent: "unknown" },
      steps: { draft: { output: { text: "[the text the model drafts]" } } },
      run: { id: "(preview)" },
    });
    expect(send?.detail).toEqual({ kind: "send_email", connection: "smtp", email: expected });
    expect(expected).toEqual({ to: "ann@example.test", subject: "Hello Ann from Acme", text: "Hi Ann,\n[the text the model drafts]", html: "<p>Ann</p>" });
    // The approver is shown the same email, and who is asked.
    const ok = p.steps.find((s) => s.nodeId === "ok");
    expect(ok?.detail).toMatchObject({ kind: "approval", approvers: "sam@acme.test", title: "Send to ann@example.test?", email: expected });
    expect(ok?.assumption).toMatch(/approved/);
  });

  it("the requests a CRM and a model would get, secrets never shown", () => {
    const p = previewJourney(graph, sample, friday, { connections });
    expect(p.steps.find((s) => s.nodeId === "crm")?.detail).toEqual({
      kind: "crm_upsert",
      connection: "crm",
      request: {
        method: "PUT",
        url: "https://crm.example.test/v2/objects/contact/records/ann%40example.test",
        headers: { Authorization: "Bearer (the CRM's API token: not shown)" },
        body: { externalId: "ann@example.test", fields: { plan: "pro", replied: "reply" } },
      },
    });
    const draft = p.steps.find((s) => s.nodeId === "draft")?.detail;
    expect(draft).toMatchObject({ kind: "model_draft", prompt: "Write to Ann at Acme.", request: { url: "https://models.example.test/v1/chat/completions" } });
  });

  it("names a missing value in words, shows it in place, and says a run would stop there", () => {
    const p = previewJourney(graph, { input: { ...sample.input, company: undefined } }, friday, { connections });
    expect(p.missing.map((m) => `${m.nodeId}.${m.field}: ${m.words}`)).toEqual([
      "draft.prompt: {{input.company}} is empty in this sample",
      "ok.subject: {{input.company}} is empty in this sample", // the email the approver is shown
      "send.subject: {{input.company}} is empty in this sample",
    ]);
    const send = p.steps.find((s) => s.nodeId === "send");
    expect(send?.detail).toMatchObject({ email: { subject: "Hello Ann from {{input.company}}" } });
    expect(send?.stops).toMatch(/A real run would stop here: \{\{input.company\}\} has no value/);
    // An empty string is named too, but a run would not stop for it.
    const empty = previewJourney(graph, { input: { ...sample.input, company: "" } }, friday, { connections });
    expect(empty.missing[0]).toMatchObject({ path: "input.company", stops: false });
  });

  it("a wait across the autumn clock change: Monday 09:00 in Berlin is 08:00 UTC, by the timers' own schedule", () => {
    const p = previewJourney(graph, sample, friday, { connections });
    const wait = p.steps.find((s) => s.nodeId === "morning");
    const detail = wait?.detail as Extract<NonNullable<typeof wait>["detail"], { kind: "wait" }>;
    expect(detail.zone).toBe("Europe/Berlin");
    expect(detail.instants[0]?.at).toBe("2026-10-26T08:00:00.000Z");
    expect(detail.instants[0]?.local).toMatch(/^Mon 26 Oct 2026, 09:00/);
    expect(detail.instants[0]?.clockChange).toMatch(/UTC\+02:00 to UTC\+01:00/);
    expect(detail.instants[0]?.at).toBe(dueInstant({ kind: "next_weekday", at: "09:00" }, "Europe/Berlin", friday).toISOString());
    // Later waits count from it: the reply deadline is three days after Monday 09:00.
    expect(p.steps.find((s) => s.nodeId === "reply")?.detail).toMatchObject({ deadline: { at: "2026-10-29T08:00:00.000Z" } });
    // A contact from Settings in another zone moves the wait: 06:00 in New York, so 09:00 the same Friday.
    const ny = previewJourney(graph, { input: { ...sample.input, tz: undefined }, contact: { email: "ann@example.test", timeZone: "America/New_York" } }, friday, { connections });
    expect(ny.steps.find((s) => s.nodeId === "morning")?.detail).toMatchObject({ instants: [{ at: "2026-10-23T13:00:00.000Z" }, {}, {}] });
  });

  it("takes the branch the data says, and the assumed decision and reply", () => {
    const basic = previewJourney(graph, { input: { ...sample.input, plan: "free" } }, friday, { connections });
    expect(basic.steps.map((s) => s.nodeId)).toEqual(["trigger", "morning", "is_pro", "basic"]);
    expect(basic.steps[2]?.detail).toMatchObject({ kind: "branch", result: false, edge: "false", to: "basic", why: ['input.plan is "free" in this sample'] });
    const rejected = previewJourney(graph, sample, friday, { connections, assume: { approval: "rejected" } });
    expect(rejected.steps.at(-1)?.nodeId).toBe("rejected");
    const silent = previewJourney(graph, sample, friday, { connections, assume: { reply: false } });
    expect(silent.steps.at(-1)?.nodeId).toBe("no_reply");
  });

  it("a loop is cut, not walked forever", () => {
    const loop = graphSchema.parse({
      nodes: [
        { id: "trigger", kind: "trigger" },
        { id: "w", kind: "wait", config: { rule: { kind: "duration", seconds: 60 } } },
      ],
      edges: [
        { from: "trigger", to: "w" },
        { from: "w", to: "w" },
      ],
    });
    const p = previewJourney(loop, { input: {} }, friday);
    expect(p.outcome.kind).toBe("cut");
    expect(p.steps.length).toBeLessThanOrEqual(41);
  });
});
