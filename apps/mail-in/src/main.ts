import { createLogger, ingestEmailReply, onShutdown, requireSecretKey } from "@holdfast/core";
import { createDb } from "@holdfast/db";
import { type AddressObject, simpleParser } from "mailparser";
import { SMTPServer } from "smtp-server";
import { env } from "./env";
import { orgOfRecipient } from "./recipient";

/**
 * The self-hosted inbound email receiver: replies sent to `reply+<org>@<this host>` are parsed (mailparser) into the
 * same signal the inbound-email webhook makes. A message is answered 250 only after its signal committed; any
 * failure is a 451 (try again later), so the sending server keeps it and nothing is lost.
 */
const log = createLogger("mail-in", env.LOG_LEVEL);
const db = createDb(env.DATABASE_URL, { poolSize: Math.min(env.DB_POOL_SIZE, 4), applicationName: "holdfast-mail-in" });
await requireSecretKey(db, log);

const temporary = (message: string) => Object.assign(new Error(message), { responseCode: 451 });
const addresses = (a: AddressObject | AddressObject[] | undefined) => (Array.isArray(a) ? a : a ? [a] : []).flatMap((x) => x.value.map((v) => v.address ?? ""));

const server = new SMTPServer({
  authOptional: true,
  disabledCommands: ["STARTTLS", "AUTH"],
  size: env.INBOUND_SMTP_MAX_BYTES,
  logger: false,
  onRcptTo(address, _session, callback) {
    if (!orgOfRecipient(address.address)) return callback(Object.assign(new Error("no such mailbox"), { responseCode: 550 }));
    callback();
  },
  onData(stream, session, callback) {
    simpleParser(stream)
      .then(async (mail) => {
        const orgs = [...new Set(session.envelope.rcptTo.map((r) => orgOfRecipient(r.address)).filter((o): o is string => o !== null))];
        const email = {
          messageId: mail.messageId ?? `<mail-in-${session.id}@${env.INBOUND_SMTP_HOST}>`,
          from: addresses(mail.from)[0] ?? (session.envelope.mailFrom ? session.envelope.mailFrom.address : "unknown"),
          to: addresses(mail.to).join(", "),
          subject: mail.subject ?? "",
          ...(mail.inReplyTo ? { inReplyTo: mail.inReplyTo } : {}),
          ...(mail.references ? { references: mail.references } : {}),
          text: (mail.text ?? "").slice(0, 200_000),
        };
        for (const org of orgs) {
          const outcome = await ingestEmailReply(db, org, email);
          log.info({ org, messageId: email.messageId, ...outcome }, "inbound reply");
        }
        callback();
      })
      .catch((err) => {
        log.error({ err }, "inbound reply not stored: asking the sender to retry");
        callback(temporary("temporary failure, try again later"));
      });
  },
});
server.on("error", (err) => log.warn({ err }, "smtp session error"));
server.listen(env.INBOUND_SMTP_PORT, env.INBOUND_SMTP_HOST, () => {
  const address = server.server.address();
  log.info({ address }, `mail-in ready on port ${typeof address === "object" && address ? address.port : env.INBOUND_SMTP_PORT}`);
});

onShutdown(log, async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await db.$disconnect();
});
