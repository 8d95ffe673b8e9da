import { mailInPort, startTestDeployment, type TestDeployment } from "@holdfast/testkit";
import nodemailer from "nodemailer";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * mail-in's size limit: smtp-server only marks a message that goes past INBOUND_SMTP_MAX_BYTES and keeps streaming
 * it, so the receiver itself refuses it (552) and stores nothing of it; a message within the limit is taken.
 */
let d: TestDeployment;
beforeAll(async () => {
  d = await startTestDeployment();
  await d.q("INSERT INTO organisations (id, slug, name) VALUES ('org_size', 'acme', 'Acme')");
});
afterAll(async () => d?.stop());

describe("mail-in's size limit", () => {
  it("refuses a message larger than INBOUND_SMTP_MAX_BYTES with 552 and stores nothing of it; a small one is taken", async () => {
    const mailIn = d.spawn({ app: "mail-in", env: { INBOUND_SMTP_PORT: "0", INBOUND_SMTP_MAX_BYTES: "4096" } });
    try {
      await mailIn.waitForOutput(/mail-in ready on port \d+/, 30_000);
      const transport = nodemailer.createTransport({ host: "127.0.0.1", port: mailInPort(mailIn), secure: false, ignoreTLS: true });
      const send = (id: string, text: string) => transport.sendMail({ from: "lee@example.com", to: "reply+acme@inbound.example.com", subject: "Re: Hi", text, messageId: id });
      await send("<small@mail.example.com>", "Count me in");
      await expect(send("<big@mail.example.com>", "x".repeat(200_000))).rejects.toMatchObject({ responseCode: 552 });
      transport.close();
      const stored = await d.q("SELECT identity FROM signals ORDER BY identity");
      expect(stored.map((r) => r.identity)).toEqual(["<small@mail.example.com>"]);
    } finally {
      await mailIn.stop();
    }
  });
});
