import { createLogger } from "@holdfast/core/base";
import { databasePing } from "@holdfast/core/store";
import { bounceTokenOf, ingestInboundEmail, recordBounce, resolveBounceAddress, resolveReplyRoutes, routingTokenOf } from "@holdfast/core/people";
import { onShutdown, requireSecretKey, watchOutages } from "@holdfast/core/run";
import { createDb } from "@holdfast/db";
import { Transform } from "node:stream";
import { type AddressObject, simpleParser } from "mailparser";
import { SMTPServer } from "smtp-server";
import { env } from "./env";
import { deliveryStatusOf } from "./bounce";
import { orgOfRecipient } from "./recipient";

/**
 * The self-hosted inbound email receiver: replies sent to a routing address (`reply+<token>@<INBOUND_EMAIL_DOMAIN>`,
 * the Reply-To of every email runs send when it is set) or to `reply+<org>@<this host>` are parsed (mailparser) into
 * the same signal the inbound-email webhook makes. A routing address this deployment did not issue is refused at RCPT. A message is answered 250 only after its signal committed; any
 * failure is a 451 (try again later), so the sending server keeps it and nothing is lost.
 */
const log = createLogger("mail-in", env.LOG_LEVEL);
// A lost database is said once per outage by the watch; meanwhile every message is answered 451 and the sender retries.
const outages = watchOutages({ log, database: () => databasePing(db) });
const db = createDb(env.DATABASE_URL, { poolSize: Math.min(env.DB_POOL_SIZE, 4), applicationName: "holdfast-mail-in", poolMode: env.DATABASE_POOL_MODE, onConnectionError: (e) => outages.report(e) });
await requireSecretKey(db, log);

const temporary = (message: string) => Object.assign(new Error(message), { responseCode: 451 });
const tooLarge = () => Object.assign(new Error(`message too large: at most ${env.INBOUND_SMTP_MAX_BYTES} bytes`), { responseCode: 552 });

/**
 * The message's bytes up to INBOUND_SMTP_MAX_BYTES, the rest read and dropped: smtp-server only marks a stream that
 * went past its `size` (sizeExceeded) and keeps sending every byte, so without this a sender could make the parser
 * hold a message of any size in memory. The caller refuses a message that went past (552) before using any of it.
 */
function capped(max: number): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      const room = max - seen;
      seen += chunk.length;
      done(null, room > 0 ? (chunk.length > room ? chunk.subarray(0, room) : chunk) : undefined);
    },
  });
}
const addresses = (a: AddressObject | AddressObject[] | undefined) => (Array.isArray(a) ? a : a ? [a] : []).flatMap((x) => x.value.map((v) => v.address ?? ""));

const server = new SMTPServer({
  authOptional: true,
  disabledCommands: ["STARTTLS", "AUTH"],
  size: env.INBOUND_SMTP_MAX_BYTES,
  logger: false,
  onRcptTo(address, _session, callback) {
    const noSuchMailbox = () => callback(Object.assign(new Error("no such mailbox"), { responseCode: 550 }));
    const retryLater = (err: unknown) => {
      if (!outages.report(err)) log.error({ err }, "routing address not checked: asking the sender to retry");
      callback(temporary("temporary failure, try again later"));
    };
    // A bounce address (the VERP envelope sender of a sent email) is taken only when this deployment issued it.
    if (bounceTokenOf(address.address)) {
      resolveBounceAddress(db, address.address).then((sent) => (sent ? callback() : noSuchMailbox()), retryLater);
      return;
    }
    if (routingTokenOf(address.address)) {
      resolveReplyRoutes(db, [address.address]).then(({ routes }) => (routes.length > 0 ? callback() : noSuchMailbox()), retryLater);
      return;
    }
    if (!orgOfRecipient(address.address)) return noSuchMailbox();
    callback();
  },
  onData(stream, session, callback) {
    simpleParser(stream.pipe(capped(env.INBOUND_SMTP_MAX_BYTES)))
      .then(async (mail) => {
        if (stream.sizeExceeded) return callback(tooLarge());
        const all = session.envelope.rcptTo.map((r) => r.address);
        // Delivery status notifications to bounce addresses: matched to their message by the address alone.
        for (const address of all.filter((r) => bounceTokenOf(r) !== null)) {
          const sent = await resolveBounceAddress(db, address);
          const outcome = sent ? await recordBounce(db, sent, deliveryStatusOf(mail)) : { kind: "no_such_message" };
          log.info({ messageId: mail.messageId, ...outcome }, "bounce");
        }
        const recipients = all.filter((r) => bounceTokenOf(r) === null);
        const routed = recipients.some((r) => routingTokenOf(r) !== null);
        const orgs = routed ? [] : [...new Set(recipients.map((r) => orgOfRecipient(r)).filter((o): o is string => o !== null))];
        const email = {
          messageId: mail.messageId ?? `<mail-in-${session.id}@${env.INBOUND_SMTP_HOST}>`,
          from: addresses(mail.from)[0] ?? (session.envelope.mailFrom ? session.envelope.mailFrom.address : "unknown"),
          to: addresses(mail.to).join(", "),
          subject: mail.subject ?? "",
          ...(mail.inReplyTo ? { inReplyTo: mail.inReplyTo } : {}),
          ...(mail.references ? { references: mail.references } : {}),
          text: (mail.text ?? "").slice(0, 200_000),
        };
        if (routed) {
          for (const outcome of await ingestInboundEmail(db, { recipients, email })) log.info({ messageId: email.messageId, ...outcome }, "inbound reply");
        }
        for (const org of orgs) {
          for (const outcome of await ingestInboundEmail(db, { recipients: [], orgSlug: org, email })) log.info({ messageId: email.messageId, ...outcome }, "inbound reply");
        }
        callback();
      })
      .catch((err) => {
        if (!outages.report(err)) log.error({ err }, "inbound reply not stored: asking the sender to retry");
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
  outages.stop();
  await db.$disconnect();
});
