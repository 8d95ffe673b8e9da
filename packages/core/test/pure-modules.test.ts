import { createHmac, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { type ApprovalView, type Decider, describeOutcome, describeOwnDecision, judge, mayDecide, readBack } from "../src/people/approvals/judge";
import { issueButtonToken, verifyButtonToken } from "../src/people/approvals/token";
import { contactChangeRefusal, contactRefusals } from "../src/run/contacts/rules";
import { renderTemplate, type TemplateContext, templateProblems, templateReferences, unescapedOutputs } from "../src/base/templates/render";
import { diffGraphs, isEmptyDiff } from "../src/versions/diff";
import type { Graph } from "../src/versions/graph";

/** The pure modules' rules, each without a database: who may decide an approval, button tokens, templates, graph diffs. */

const at = new Date("2026-12-01T11:40:00Z");
const pending: ApprovalView = {
  status: "pending",
  approvers: { users: ["sam@acme.test"], role: "editor" },
  digest: "d1",
  pastDeadline: false,
  runStatus: "running",
  cancelRequested: false,
  decidedBy: null,
  decidedByName: null,
  decidedVia: null,
  decidedAt: null,
};
const sam: Decider = { userId: "usr_sam", email: "sam@acme.test", name: "Sam", role: "approver" };

describe("approvals/judge", () => {
  it("owners always; named users; a role or higher; never viewers or non-members", () => {
    const approvers = { users: ["sam@acme.test"], role: "editor" as const };
    expect(mayDecide(approvers, { email: "SAM@acme.test", role: "approver" })).toBe(true); // named (case-insensitive)
    expect(mayDecide(approvers, { email: "alex@acme.test", role: "approver" })).toBe(false); // below the role
    expect(mayDecide(approvers, { email: "alex@acme.test", role: "editor" })).toBe(true);
    expect(mayDecide({ users: [] }, { email: "olivia@acme.test", role: "owner" })).toBe(true);
    expect(mayDecide(approvers, { email: "sam@acme.test", role: "viewer" })).toBe(false);
    expect(mayDecide(approvers, { email: "sam@acme.test", role: null })).toBe(false);
  });

  it("refusals in order: membership, decided (own or someone's), stopped run, deadline, changed content, permission", () => {
    expect(judge(pending, { ...sam, role: null }, "d1")?.reason).toBe("not_permitted");
    const decided = { ...pending, status: "approved" as const, decidedBy: "usr_sam", decidedByName: "Sam", decidedVia: "slack" as const, decidedAt: at };
    const own = judge(decided, sam, "d1");
    expect(own).toMatchObject({ reason: "already_decided", mine: true, message: "you approved this at 11:40 UTC on 2026-12-01 (slack)" });
    expect(readBack(own as NonNullable<typeof own>)).toBe("Already recorded: you approved this at 11:40 UTC on 2026-12-01 (slack)");
    const other = judge(decided, { ...sam, userId: "usr_alex", name: "Alex" }, "d1");
    expect(other).toMatchObject({ reason: "already_decided", mine: false, message: "approved by Sam (slack) at 11:40 UTC on 2026-12-01" });
    expect(readBack(other as NonNullable<typeof other>)).toMatch(/^Not recorded: approved by Sam/);
    // A decided approval is reported as decided even when the run has stopped since.
    expect(judge({ ...decided, runStatus: "cancelled" }, sam, "d1")?.reason).toBe("already_decided");
    expect(judge({ ...pending, cancelRequested: true }, sam, "d1")).toEqual({ reason: "run_stopped", message: "the run was cancelled" });
    expect(judge({ ...pending, runStatus: "failed" }, sam, "d1")).toEqual({ reason: "run_stopped", message: "the run is failed" });
    expect(judge({ ...pending, pastDeadline: true }, sam, "d1")?.reason).toBe("deadline_passed");
    expect(judge(pending, sam, "stale-digest")?.reason).toBe("content_changed");
    expect(judge(pending, { ...sam, email: "alex@acme.test" }, "d1")?.reason).toBe("not_permitted");
    expect(judge(pending, sam, "d1")).toBeNull();
  });

  it("outcomes in words: default decisions, escalations, expiries, stopped runs", () => {
    const base = { decidedByName: null, decidedAt: at };
    expect(describeOutcome({ ...base, status: "approved", decidedVia: "deadline" })).toBe("approved by default when the deadline passed at 11:40 UTC on 2026-12-01");
    expect(describeOutcome({ ...base, status: "escalated", decidedVia: "deadline" })).toBe("escalated when the deadline passed at 11:40 UTC on 2026-12-01");
    expect(describeOutcome({ ...base, status: "expired", decidedVia: "deadline" })).toBe("expired with no decision at 11:40 UTC on 2026-12-01");
    expect(describeOutcome({ ...base, status: "cancelled", decidedVia: "run" })).toBe("closed: the run stopped at 11:40 UTC on 2026-12-01");
    expect(describeOutcome({ status: "pending", decidedByName: null, decidedAt: null, decidedVia: null })).toBe("pending");
    expect(describeOwnDecision({ status: "rejected", decidedAt: null, decidedVia: "inbox" })).toBe("you rejected this (inbox)");
  });
});

describe("approvals/token", () => {
  const claims = { orgId: "org_1", runId: "run_1", stepId: "stp_1", approvalId: "apr_1", decision: "approved" as const, digest: "d1" };
  const now = new Date("2026-12-01T12:00:00Z");
  const nowSeconds = Math.floor(now.getTime() / 1000);

  it("verifies its own token until the deadline; expired, tampered, re-signed and malformed ones are refused", () => {
    const token = issueButtonToken(claims, new Date(now.getTime() + 3_600_000), now);
    expect(verifyButtonToken(token, nowSeconds)).toMatchObject({ ok: true, claims: { o: "org_1", r: "run_1", s: "stp_1", a: "apr_1", x: "approved", d: "d1" } });
    expect(verifyButtonToken(token, nowSeconds + 3_600)).toEqual({ ok: false, reason: "expired" });
    const [body, mac] = token.split(".") as [string, string];
    const claimsJson = JSON.parse(Buffer.from(body, "base64url").toString("utf8"));
    const forgedBody = Buffer.from(JSON.stringify({ ...claimsJson, x: "rejected" })).toString("base64url");
    expect(verifyButtonToken(`${forgedBody}.${mac}`, nowSeconds)).toEqual({ ok: false, reason: "bad_signature" });
    const flipped = `${mac[0] === "A" ? "B" : "A"}${mac.slice(1)}`;
    expect(verifyButtonToken(`${body}.${flipped}`, nowSeconds)).toEqual({ ok: false, reason: "bad_signature" });
    expect(verifyButtonToken(`${body}.${mac}.extra`, nowSeconds)).toEqual({ ok: false, reason: "malformed" });
    expect(verifyButtonToken("", nowSeconds)).toEqual({ ok: false, reason: "malformed" });
  });

  it("a token never outlives 60 days, whatever deadline it is given", () => {
    const token = issueButtonToken(claims, new Date(now.getTime() + 365 * 86_400_000), now);
    expect(verifyButtonToken(token, nowSeconds + 59 * 86_400).ok).toBe(true);
    expect(verifyButtonToken(token, nowSeconds + 60 * 86_400)).toEqual({ ok: false, reason: "expired" });
  });

  it("is bound to the deployment's key: the same claims signed with another key are refused", () => {
    const [body] = issueButtonToken(claims, new Date(now.getTime() + 3_600_000), now).split(".") as [string];
    const otherMac = createHmac("sha256", randomBytes(32)).update(body).digest("base64url");
    expect(verifyButtonToken(`${body}.${otherMac}`, nowSeconds)).toEqual({ ok: false, reason: "bad_signature" });
  });
});

describe("templates/render", () => {
  const context: TemplateContext = {
    input: { name: "Maya <b>", plan: "pro" },
    contact: { email: "maya@example.com" },
    steps: { draft: { output: { text: "Hi & welcome" } }, reply: { output: { dueAt: "x" } } },
    run: { id: "run_1" },
  };

  it("renders text as written and escapes HTML bodies", () => {
    expect(renderTemplate("{{input.name}}: {{steps.draft.output.text}}", context, "text")).toBe("Maya <b>: Hi & welcome");
    expect(renderTemplate("<p>{{input.name}}</p>", context, "html")).toBe("<p>Maya &lt;b&gt;</p>");
  });

  it("HTML is escaped even where a template asks for raw output ({{{ }}} or {{& }}, e.g. a version published before Publish refused them)", () => {
    const attack = { ...context, input: { name: "<img src=x onerror=alert(1)>" } };
    const escaped = "&lt;img src&#x3D;x onerror&#x3D;alert(1)&gt;";
    expect(renderTemplate("<p>{{{input.name}}}</p>", attack, "html")).toBe(`<p>${escaped}</p>`);
    expect(renderTemplate("<p>{{& input.name}}</p>", attack, "html")).toBe(`<p>${escaped}</p>`);
    expect(renderTemplate("{{#if input.name}}<p>{{~{input.name}~}}</p>{{/if}}", attack, "html")).toBe(`<p>${escaped}</p>`);
    // Plain text is never escaped: triple braces change nothing there.
    expect(renderTemplate("{{{input.name}}}", attack, "text")).toBe("<img src=x onerror=alert(1)>");
  });

  it("finds every unescaped output, as written", () => {
    expect(unescapedOutputs("Hi {{input.name}}")).toEqual([]);
    expect(unescapedOutputs("<p>\n{{{input.name}}} {{& contact.email }}{{#each input.items}}{{~{this}~}}{{/each}}</p>")).toEqual([
      { written: "{{{input.name}}}", instead: "{{input.name}}" },
      { written: "{{& contact.email }}", instead: "{{contact.email }}" },
      { written: "{{~{this}~}}", instead: "{{~this~}}" },
    ]);
  });

  it("a reference with no value in the run fails, naming it in words", () => {
    expect(() => renderTemplate("Outcome: {{steps.reply.output.outcome}}", context, "text")).toThrow(
      '{{steps.reply.output.outcome}} has no value in this run (steps.reply.output has no "outcome")',
    );
    expect(() => renderTemplate("{{steps.crm.output.id}}", context, "text")).toThrow('{{steps.crm.output.id}} has no value in this run (steps has no "crm")');
  });

  it("checks before a run: known roots, steps of this graph, templates that parse; lists what a template reads", () => {
    const nodes = new Set(["draft", "reply"]);
    expect(templateProblems("{{input.name}} {{steps.draft.output.text}}", nodes)).toEqual([]);
    expect(templateProblems("{{secrets.key}}", nodes)).toEqual(['"secrets.key": references start with input., contact., steps. or run.']);
    expect(templateProblems("{{steps.gone.output.text}}", nodes)).toEqual(['"steps.gone.output.text": no node "gone" in this graph']);
    expect(templateProblems("{{#if}", nodes)[0]).toMatch(/^template does not parse/);
    expect(templateReferences("Hi {{contact.email}}, {{steps.draft.output.text}}").map((r) => r.original)).toEqual(["contact.email", "steps.draft.output.text"]);
  });
});

describe("contacts/rules", () => {
  const withdrawn = { consent: "withdrawn" as const, timeZone: "Europe/Berlin" };
  it("owners change anything; editors add contacts and record or withdraw consent, but neither give withdrawn consent back nor move a zone", () => {
    expect(contactChangeRefusal("owner", withdrawn, { consent: "granted", timeZone: "Asia/Tokyo" })).toBeNull();
    expect(contactChangeRefusal("editor", null, { consent: "granted", timeZone: "Asia/Tokyo" })).toBeNull();
    expect(contactChangeRefusal("editor", withdrawn, { consent: "granted" })).toBe(contactRefusals.regrant);
    expect(contactChangeRefusal("editor", withdrawn, { consent: "unknown" })).toBe(contactRefusals.regrant);
    expect(contactChangeRefusal("editor", withdrawn, { consent: "withdrawn", timeZone: "Europe/Berlin" })).toBeNull();
    expect(contactChangeRefusal("editor", { consent: "unknown", timeZone: null }, { consent: "granted" })).toBeNull();
    expect(contactChangeRefusal("editor", { consent: "granted", timeZone: null }, { consent: "withdrawn" })).toBeNull();
    expect(contactChangeRefusal("editor", { consent: "granted", timeZone: null }, { timeZone: "Asia/Tokyo" })).toBe(contactRefusals.rezone);
    expect(contactChangeRefusal("editor", withdrawn, { timeZone: null })).toBe(contactRefusals.rezone);
    expect(contactChangeRefusal("viewer", null, { consent: "unknown" })).toBe(contactRefusals.role);
    expect(contactChangeRefusal("approver", withdrawn, {})).toBe(contactRefusals.role);
  });
});

describe("versions/diff", () => {
  const v1: Pick<Graph, "nodes" | "edges"> = {
    nodes: [
      { id: "t", kind: "trigger", config: { eventIdField: "id" } },
      { id: "wait", kind: "wait", name: "Wait", config: { rule: { kind: "duration", seconds: 60 } } },
      { id: "old", kind: "end", config: {} },
    ] as Graph["nodes"],
    edges: [
      { from: "t", to: "wait" },
      { from: "wait", to: "old" },
    ],
  };

  it("nodes added, removed and changed field by field, edges added and removed", () => {
    const v2: Pick<Graph, "nodes" | "edges"> = {
      nodes: [
        { id: "t", kind: "trigger", config: { eventIdField: "id" } },
        { id: "wait", kind: "wait", name: "Wait a day", config: { rule: { kind: "duration", seconds: 86_400 }, spreadSeconds: 0 } },
        { id: "done", kind: "end", config: {} },
      ] as Graph["nodes"],
      edges: [
        { from: "t", to: "wait" },
        { from: "wait", to: "done" },
      ],
    };
    const d = diffGraphs(v1, v2);
    expect(d.added).toEqual([{ id: "done", kind: "end" }]);
    expect(d.removed).toEqual([{ id: "old", kind: "end" }]);
    expect(d.changed).toEqual([
      {
        id: "wait",
        kind: "wait",
        fields: [
          { field: "name", from: "Wait", to: "Wait a day" },
          { field: "config.rule", from: { kind: "duration", seconds: 60 }, to: { kind: "duration", seconds: 86_400 } },
          { field: "config.spreadSeconds", from: null, to: 0 },
        ],
      },
    ]);
    expect(d.edgesAdded).toEqual([{ from: "wait", to: "done" }]);
    expect(d.edgesRemoved).toEqual([{ from: "wait", to: "old" }]);
    expect(isEmptyDiff(d)).toBe(false);
  });

  it("key order is not a change; the same graph is an empty diff", () => {
    const reordered = { ...v1, nodes: v1.nodes.map((n) => (n.id === "wait" ? { ...n, config: { rule: { seconds: 60, kind: "duration" } } } : n)) as Graph["nodes"] };
    expect(isEmptyDiff(diffGraphs(v1, reordered))).toBe(true);
  });
});
