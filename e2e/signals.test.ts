import { createLogger, lanes } from "@holdfast/core/base";
import { GraphCache } from "@holdfast/core/versions";
import { createConnection } from "@holdfast/core/providers";
import { advanceRun, StepRunner } from "@holdfast/core/run";
import { mailInPort, publish, replyGraph, runCli, type SmtpTarget, startSmtpTarget, startTestDeployment, startTestRun, type TestDeployment } from "@holdfast/testkit";
import nodemailer from "nodemailer";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/** A reply handed over by a process that is SIGKILLed between consuming the signal and committing loses nothing. */
let d: TestDeployment;
let smtp: SmtpTarget;
let orgId = "";
const graphs = new GraphCache();
const q = (sql: string, p: unknown[] = []) => d.q(sql, p);

beforeAll(async () => {
  d = await startTestDeployment();
  smtp = d.closeAtStop(await startSmtpTarget());
  orgId = (await publish(d.t.db, replyGraph(), { automation: "ask" })).orgId;
  await createConnection(d.t.db, { orgId, kind: "smtp", name: "mail", config: { host: "127.0.0.1", port: smtp.port, tls: "none", from: "sam@acme.test" }, secret: null });
});
afterAll(async () => d?.stop());

const cli = (input: string, crash: boolean) =>
  runCli(d.t.url, ["signals", "email", "acme", "--input", input], crash ? { HOLDFAST_CRASH_AT: "signal.before_commit" } : {});

/** A run whose email went out and which now waits for the reply: its id and the sent Message-ID. */
async function waitingForReply(key: string, email: string): Promise<{ runId: string; messageId: string }> {
  const runId = await startTestRun(d.t.db, "ask", { id: key, email });
  const [send] = await q("SELECT id FROM steps WHERE run_id = $1", [runId]);
  const runner = new StepRunner({ db: d.t.db, graphs, worker: "w", lane: lanes.io, log: createLogger("test", "silent") });
  expect((await runner.run(send.id)).kind).toBe("settled");
  await advanceRun(d.t.db, graphs, { orgId, runId, reason: "step_settled" });
  const [{ output }] = await q("SELECT output FROM steps WHERE id = $1", [send.id]);
  return { runId, messageId: output.messageId as string };
}

describe("a signal's transaction", () => {
  it("SIGKILL after consuming, before the commit: nothing is stored; the provider's retry is consumed once", async () => {
    const { runId, messageId } = await waitingForReply("k1", "maya@example.com");
    const input = JSON.stringify({ messageId: "<reply-1@mail.example.com>", from: "maya@example.com", subject: "Re: Hi", inReplyTo: messageId, text: "Sure" });

    const killed = cli(input, true);
    expect(killed.signal).toBe("SIGKILL");
    expect(await q("SELECT count(*)::int AS n FROM signals")).toEqual([{ n: 0 }]);
    expect(await q("SELECT status FROM steps WHERE run_id = $1 AND node_id = 'await_reply'", [runId])).toEqual([{ status: "waiting" }]);

    const retried = cli(input, false);
    expect(JSON.parse(retried.stdout)).toMatchObject({ duplicate: false, consumed: true, runId });
    expect(JSON.parse(cli(input, false).stdout)).toMatchObject({ duplicate: true, consumed: false });
    await advanceRun(d.t.db, graphs, { orgId, runId, reason: "signal" });
    expect(await q("SELECT status FROM runs WHERE id = $1", [runId])).toEqual([{ status: "completed" }]);
    expect(await q("SELECT node_id FROM run_events WHERE run_id = $1 AND type = 'run.completed'", [runId])).toEqual([{ node_id: "replied" }]);
  });

  it("the self-hosted SMTP receiver turns a reply sent to reply+<org>@ into the same signal", async () => {
    const { runId, messageId } = await waitingForReply("k2", "lee@example.com");

    const mailIn = d.spawn({ app: "mail-in", env: { INBOUND_SMTP_PORT: "0" } });
    try {
      await mailIn.waitForOutput(/mail-in ready on port \d+/, 30_000);
      const port = mailInPort(mailIn);
      const transport = nodemailer.createTransport({ host: "127.0.0.1", port, secure: false, ignoreTLS: true });
      const send2 = () =>
        transport.sendMail({
          from: "lee@example.com",
          to: "reply+acme@inbound.example.com",
          subject: "Re: Hi",
          text: "Count me in",
          messageId: "<lee-reply@mail.example.com>",
          inReplyTo: messageId,
          references: [messageId],
        });
      await send2();
      await send2(); // the sending server retried: stored once
      await expect(transport.sendMail({ from: "x@y.z", to: "not a mailbox@inbound.example.com", text: "x" })).rejects.toThrow();
      transport.close();
      expect(await q("SELECT count(*)::int AS n FROM signals WHERE identity = '<lee-reply@mail.example.com>'")).toEqual([{ n: 1 }]);
      expect(await q("SELECT status, output->>'outcome' AS outcome FROM steps WHERE run_id = $1 AND node_id = 'await_reply'", [runId])).toEqual([
        { status: "done", outcome: "reply" },
      ]);
    } finally {
      await mailIn.stop();
    }
  });
});
