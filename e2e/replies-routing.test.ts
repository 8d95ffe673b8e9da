import { createConnection } from "@holdfast/core/providers";
import { mailInPort, mailInSpec, productProcesses, publish, replyGraph, type SmtpTarget, startSmtpTarget, startTestDeployment, startTestRun, type TestDeployment, waitFor } from "@holdfast/testkit";
import nodemailer from "nodemailer";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * Replies that route themselves, through real processes: the io lane sends with Reply-To reply+<token>@<domain>
 * (INBOUND_EMAIL_DOMAIN), and a reply to that address, with no In-Reply-To and no organisation in it, moves the run:
 * through the SMTP receiver (mail-in) and through SendGrid Inbound Parse on the built web app.
 */
const domain = "reply.acme.test";
const inboundToken = "inbound-token-0123456789abcdef";
let d: TestDeployment;
let smtp: SmtpTarget;
let mailInPortNumber = 0;
const q = (sql: string, p: unknown[] = []) => d.q(sql, p);

beforeAll(async () => {
  d = await startTestDeployment();
  smtp = d.closeAtStop(await startSmtpTarget());
  const { orgId } = await publish(d.t.db, replyGraph(), { automation: "ask" });
  await createConnection(d.t.db, { orgId, kind: "smtp", name: "mail", config: { host: "127.0.0.1", port: smtp.port, tls: "none", from: "sam@acme.test" }, secret: null });
  await d.startWeb({ INBOUND_EMAIL_TOKEN: inboundToken });
  await d.startApps([...productProcesses({ io: { INBOUND_EMAIL_DOMAIN: domain }, human: {} }), mailInSpec], 90_000);
  mailInPortNumber = mailInPort(d.app("mail-in"));
});
afterAll(async () => d?.stop());

let seq = 0;
/** A run whose email went out (in the SMTP sink) and which now waits for the reply. */
async function sent(email: string) {
  const runId = await startTestRun(d.t.db, "ask", { id: `evt_${++seq}`, email });
  const [send] = await waitFor(async () => {
    const r = await q("SELECT id, output FROM steps WHERE run_id = $1 AND node_id = 'send' AND status = 'done'", [runId]);
    return r.length ? r : undefined;
  }, 20_000, "the email to be sent");
  const mail = smtp.received.find((m) => m.messageId === send.output.messageId);
  await waitFor(async () => (await q("SELECT status FROM steps WHERE run_id = $1 AND node_id = 'await_reply'", [runId]))[0]?.status === "waiting", 20_000, "the reply wait");
  return { runId, stepId: send.id as string, replyTo: mail?.replyTo ?? null };
}
const finished = (runId: string) =>
  waitFor(async () => {
    const r = await q("SELECT r.status, e.node_id FROM runs r LEFT JOIN run_events e ON e.run_id = r.id AND e.type = 'run.completed' WHERE r.id = $1", [runId]);
    return r[0]?.status === "completed" ? r[0] : undefined;
  }, 20_000, "the run to complete");

describe("replies that route themselves", () => {
  it("the sent email's Reply-To is a routing address; a reply to it through the SMTP receiver completes the run along 'reply'", async () => {
    const run = await sent("lena@example.com");
    expect(run.replyTo).toMatch(new RegExp(`^reply\\+[a-z2-7]{42}@${domain.replace(/\./g, "\\.")}$`));
    const transport = nodemailer.createTransport({ host: "127.0.0.1", port: mailInPortNumber, secure: false, ignoreTLS: true });
    try {
      // A client that drops In-Reply-To and References: the address alone finds the run.
      await transport.sendMail({ from: "Lena <lena@example.com>", to: run.replyTo as string, subject: "Re: Hi", text: "Tuesday works.", messageId: "<lena-1@mail.example.com>" });
      // A routing address this deployment did not issue is refused at RCPT (550), so the sender's server bounces it.
      const forged = (run.replyTo as string).replace(/^reply\+(.)/, (_m, c: string) => `reply+${c === "a" ? "b" : "a"}`);
      await expect(transport.sendMail({ from: "lena@example.com", to: forged, subject: "Re: Hi", text: "x" })).rejects.toThrow(/550/);
    } finally {
      transport.close();
    }
    expect(await finished(run.runId)).toEqual({ status: "completed", node_id: "replied" });
    expect(await q("SELECT sender, unmatched_reason FROM signals WHERE identity = '<lena-1@mail.example.com>'")).toEqual([{ sender: "lena@example.com", unmatched_reason: null }]);
  });

  it("SendGrid Inbound Parse on the web app: refused without the token, routed by the envelope with it; another sender stays unmatched", async () => {
    const run = await sent("kim@example.com");
    const form = (from: string, messageId: string) => {
      const f = new FormData();
      f.append("from", from);
      f.append("to", run.replyTo as string);
      f.append("subject", "Re: Hi");
      f.append("text", "Yes please.");
      f.append("headers", `Message-ID: ${messageId}\r\nFrom: ${from}\r\n`);
      f.append("envelope", JSON.stringify({ to: [run.replyTo], from }));
      return f;
    };
    const url = `${d.web.base}/api/signals/email/sendgrid`;
    expect((await fetch(url, { method: "POST", body: form("kim@example.com", "<kim-0@mail.example.com>") })).status).toBe(401);
    const mallory = await fetch(`${url}?token=${inboundToken}`, { method: "POST", body: form("mallory@evil.example", "<mallory@evil.example>") });
    expect(mallory.status).toBe(200);
    expect(((await mallory.json()) as { unmatchedReason: string }).unmatchedReason).toMatch(/is not the recipient kim@example.com/);
    const basic = `Basic ${Buffer.from(`inbound:${inboundToken}`).toString("base64")}`;
    const res = await fetch(url, { method: "POST", headers: { authorization: basic }, body: form("kim@example.com", "<kim-1@mail.example.com>") });
    expect(res.status).toBe(202);
    expect(await res.json()).toMatchObject({ routed: true, consumed: true, runId: run.runId });
    const big = new FormData();
    big.append("text", "x".repeat(300_000));
    expect((await fetch(url, { method: "POST", headers: { authorization: basic }, body: big })).status).toBe(413);
    expect(await finished(run.runId)).toEqual({ status: "completed", node_id: "replied" });
  });
});
