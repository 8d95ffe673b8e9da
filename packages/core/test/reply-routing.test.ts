import { randomBytes } from "node:crypto";
import { createTestDatabase, publish, type SmtpTarget, startSmtpTarget, type TestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lanes } from "../src/base/catalog";
import { createConnection } from "../src/providers/connections/connect";
import { advanceRun } from "../src/run/engine/advance";
import { createLogger } from "../src/base/log";
import { ingestInboundEmail, UnroutableReplyError } from "../src/people/signals/inbound";
import {
  inboundEmailDomain,
  parseRoutingToken,
  replyRoutingAddress,
  replyRoutingToken,
  resolveReplyRoutes,
  routingTokenMatches,
  routingTokenOf,
} from "../src/people/signals/routing";
import { startRun } from "../src/run/start/start-run";
import { StepRunner } from "../src/run/steps/runner";
import { parseGraph } from "../src/versions/graph";
import { GraphCache } from "../src/versions/graph-cache";

const ref = { orgId: "org_1", runId: "run_0123456789abcdef0123456789abcdef", stepId: "stp_00112233445566778899aabbccddeeff" };

describe("routing tokens", () => {
  it("round trip: the token names its step, fits a local part, and matches only its organisation, run and step", () => {
    const token = replyRoutingToken(ref);
    expect(token).toMatch(/^[a-z2-7]{42}$/);
    expect(`reply+${token}`.length).toBeLessThanOrEqual(64);
    expect(parseRoutingToken(token)?.stepId).toBe(ref.stepId);
    expect(routingTokenMatches(token, ref)).toBe(true);
    expect(replyRoutingToken(ref)).toBe(token); // every attempt of a step sends the same address
    expect(routingTokenMatches(token, { ...ref, orgId: "org_2" })).toBe(false);
    expect(routingTokenMatches(token, { ...ref, runId: "run_ffffffffffffffffffffffffffffffff" })).toBe(false);
    const address = replyRoutingAddress(ref, "reply.acme.test");
    expect(address).toBe(`reply+${token}@reply.acme.test`);
    // Mail systems may change a local part's case or wrap it in angle brackets.
    expect(routingTokenOf(`<${address.toUpperCase()}>`)).toBe(token);
    expect(routingTokenOf("reply+acme@reply.acme.test")).toBeNull();
  });

  it("forgery is refused: a changed character, another step's id with an old MAC, another deployment's key", () => {
    const token = replyRoutingToken(ref);
    // A character inside the MAC.
    const at = token.length - 4;
    const changed = token[at] === "a" ? "b" : "a";
    expect(routingTokenMatches(`${token.slice(0, at)}${changed}${token.slice(at + 1)}`, ref)).toBe(false);
    // The last character, whatever it becomes: its low bits are padding, which must be zero (the canonical encoding
    // only), so no second spelling of a token is taken either.
    for (const c of "abcdefghijklmnopqrstuvwxyz234567".replace(token.slice(-1), "")) {
      expect(routingTokenMatches(`${token.slice(0, -1)}${c}`, ref)).toBe(false);
    }
    const other = { ...ref, stepId: "stp_ffffffffffffffffffffffffffffffff" };
    const spliced = `${replyRoutingToken(other).slice(0, 26)}${token.slice(26)}`;
    expect(routingTokenMatches(spliced, other)).toBe(false);
    expect(routingTokenMatches(replyRoutingToken(ref, randomBytes(32)), ref)).toBe(false);
    expect(parseRoutingToken("not-a-token")).toBeNull();
  });

  it("INBOUND_EMAIL_DOMAIN: unset or empty is off, a domain is lower-cased, anything else is a sentence", () => {
    expect(inboundEmailDomain({})).toBeNull();
    expect(inboundEmailDomain({ INBOUND_EMAIL_DOMAIN: " " })).toBeNull();
    expect(inboundEmailDomain({ INBOUND_EMAIL_DOMAIN: "Reply.Acme.test" })).toBe("reply.acme.test");
    expect(() => inboundEmailDomain({ INBOUND_EMAIL_DOMAIN: "not a domain" })).toThrow(/INBOUND_EMAIL_DOMAIN must be a mail domain/);
  });
});

let t: TestDatabase;
let smtp: SmtpTarget;
const log = createLogger("test", "silent");
const graphs = new GraphCache();
const rows = async (q: string, p: unknown[] = []) => (await t.sql.query(q, p)).rows;
let n = 0;

beforeAll(async () => {
  t = await createTestDatabase();
  smtp = await startSmtpTarget();
  const graph = parseGraph({
    nodes: [
      { id: "t", kind: "trigger", config: { eventIdField: "id" } },
      { id: "send", kind: "send_email", config: { connection: "mail", subject: "Quick question", text: "Can we talk?" } },
      { id: "await_reply", kind: "wait_for_reply", config: { replyTo: "send", timeoutSeconds: 3600 } },
      { id: "done", kind: "end" },
      { id: "gave_up", kind: "end" },
    ],
    edges: [
      { from: "t", to: "send" },
      { from: "send", to: "await_reply" },
      { from: "await_reply", to: "done", label: "reply" },
      { from: "await_reply", to: "gave_up", label: "timeout" },
    ],
  });
  const { orgId } = await publish(t.db, graph, { automation: "reply" });
  await createConnection(t.db, { orgId, kind: "smtp", name: "mail", config: { host: "127.0.0.1", port: smtp.port, tls: "none", from: "sam@acme.test" }, secret: null });
});
afterAll(async () => {
  delete process.env.INBOUND_EMAIL_DOMAIN;
  await smtp?.close();
  await t?.drop();
});

/** Starts a run and sends its email with INBOUND_EMAIL_DOMAIN as given; the run then waits for the reply. */
async function sendWith(domain: string | undefined) {
  if (domain) process.env.INBOUND_EMAIL_DOMAIN = domain;
  else delete process.env.INBOUND_EMAIL_DOMAIN;
  const email = `lena${++n}@example.com`;
  const { runId, orgId } = await startRun(t.db, {
    orgSlug: "acme",
    automationSlug: "reply",
    rawBody: "{}",
    body: { id: `r${n}`, email },
    headers: { "webhook-id": null, "webhook-timestamp": null, "webhook-signature": null },
    via: "test",
    auth: { kind: "operator" },
  }).then(async (r) => ({ ...r, orgId: (await rows("SELECT org_id FROM runs WHERE id = $1", [r.runId]))[0].org_id as string }));
  const [{ id: stepId }] = await rows("SELECT id FROM steps WHERE run_id = $1 AND node_id = 'send'", [runId]);
  const runner = new StepRunner({ db: t.db, graphs, worker: "w", lane: lanes.io, log });
  expect((await runner.run(stepId)).kind).toBe("settled");
  await advanceRun(t.db, graphs, { orgId, runId, reason: "step_settled" });
  const [{ output }] = await rows("SELECT output FROM steps WHERE id = $1", [stepId]);
  const received = smtp.received.find((m) => m.messageId === output.messageId);
  return { runId, orgId, stepId: stepId as string, email, messageId: output.messageId as string, replyTo: received?.replyTo ?? null, recordedReplyTo: output.replyTo ?? null };
}
const waitStatus = async (runId: string) => (await rows("SELECT status, output FROM steps WHERE run_id = $1 AND node_id = 'await_reply'", [runId]))[0];

describe("replies that route themselves", () => {
  it("Reply-To is the step's routing address when INBOUND_EMAIL_DOMAIN is set, and absent when it is not", async () => {
    const on = await sendWith("reply.acme.test");
    expect(on.replyTo).toBe(replyRoutingAddress({ orgId: on.orgId, runId: on.runId, stepId: on.stepId }, "reply.acme.test"));
    expect(on.recordedReplyTo).toBe(on.replyTo); // the step's output records the Reply-To it sent
    const off = await sendWith(undefined);
    expect(off.messageId).toMatch(/^<hf\./);
    expect(off.replyTo).toBeNull();
    expect(off.recordedReplyTo).toBeNull();
  });

  it("a reply to the routing address, without In-Reply-To or an organisation, settles the wait", async () => {
    const sent = await sendWith("reply.acme.test");
    expect((await waitStatus(sent.runId)).status).toBe("waiting");
    const to = sent.replyTo as string;
    const { routes } = await resolveReplyRoutes(t.db, [to]);
    expect(routes).toEqual([{ orgId: sent.orgId, orgSlug: "acme", runId: sent.runId, stepId: sent.stepId, messageId: sent.messageId }]);
    const [outcome] = await ingestInboundEmail(t.db, {
      recipients: [to.toUpperCase()],
      email: { messageId: `<routed-${n}@mail.example.com>`, from: `"Lena" <${sent.email}>`, to, subject: "Re: Quick question", text: "Tuesday works." },
    });
    expect(outcome).toMatchObject({ org: "acme", routed: true, consumed: true, runId: sent.runId });
    const wait = await waitStatus(sent.runId);
    expect(wait.status).toBe("done");
    expect(wait.output).toMatchObject({ outcome: "reply", reply: { text: "Tuesday works." } });
  });

  it("replies only from the recipient: someone else writing to the routing address is stored unmatched with the reason", async () => {
    const sent = await sendWith("reply.acme.test");
    const [outcome] = await ingestInboundEmail(t.db, {
      recipients: [sent.replyTo as string],
      email: { messageId: `<forged-${n}@evil.example>`, from: "mallory@evil.example", subject: "Re: Quick question", text: "yes" },
    });
    expect(outcome).toMatchObject({ routed: true, consumed: false });
    expect(outcome?.unmatchedReason).toMatch(`sender mallory@evil.example is not the recipient ${sent.email}`);
    const [signal] = await rows("SELECT sender, unmatched_reason FROM signals WHERE identity = $1", [`<forged-${n}@evil.example>`]);
    expect(signal.unmatched_reason).toMatch(/is not the recipient/);
    expect((await waitStatus(sent.runId)).status).toBe("waiting");
  });

  it("a forged routing address is refused and nothing is stored; with an organisation named it falls back to In-Reply-To", async () => {
    const sent = await sendWith("reply.acme.test");
    const token = routingTokenOf(sent.replyTo as string) as string;
    const forged = `reply+${token.slice(0, -1)}${token.endsWith("a") ? "b" : "a"}@reply.acme.test`;
    const before = (await rows("SELECT count(*)::int AS n FROM signals"))[0].n;
    const email = { messageId: `<f-${n}@mail.example.com>`, from: sent.email, subject: "Re", text: "yes" };
    await expect(ingestInboundEmail(t.db, { recipients: [forged], email })).rejects.toBeInstanceOf(UnroutableReplyError);
    expect((await rows("SELECT count(*)::int AS n FROM signals"))[0].n).toBe(before);
    expect((await resolveReplyRoutes(t.db, [forged])).refused).toHaveLength(1);
    const [outcome] = await ingestInboundEmail(t.db, { recipients: [forged], orgSlug: "acme", email: { ...email, inReplyTo: sent.messageId } });
    expect(outcome).toMatchObject({ routed: false, consumed: true, runId: sent.runId });
  });
});
