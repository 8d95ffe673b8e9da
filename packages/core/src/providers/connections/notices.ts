import { type Db, inTx } from "@holdfast/db";
import { z } from "zod";
import { type EgressOptions, egressRefusalOf } from "../net/egress";
import { egressSmtpTransport } from "../net/smtp";
import { type ClaimedNotice, noticesClaimOwedEmail, noticesSettleEmail } from "../../store/sql/connection-notices";

/**
 * The deployment's own mailbox for notices to people (not an organisation's connection): HOLDFAST_SYSTEM_SMTP_URL
 * as smtp://user:password@host:587 (STARTTLS when offered), smtps://…:465 (implicit TLS) or smtp+plain:// (no TLS,
 * local relays and tests); HOLDFAST_SYSTEM_MAIL_FROM the sender. Unset: notices are shown in the app only.
 */
export const systemMailEnv = z.object({
  HOLDFAST_SYSTEM_SMTP_URL: z
    .string()
    .url()
    .refine((u) => /^(smtps?|smtp\+plain):\/\//.test(u), "must start with smtp://, smtps:// or smtp+plain://")
    .optional()
    .describe(
      "The deployment's system mailbox (owners' notices of broken connections, invitations), smtp://user:pass@host:587, smtps://…:465 or smtp+plain://host:25; set it for the web too; unset = notices in the app only, an invitation's link shown once to the owner",
    ),
  HOLDFAST_SYSTEM_MAIL_FROM: z.string().min(3).max(320).default("Holdfast <holdfast@localhost>").describe("The sender of the system mailbox's emails"),
  HOLDFAST_APP_URL: z
    .string()
    .url()
    .optional()
    .describe("The public address for links in the system mailbox's emails, e.g. https://holdfast.example.com; unset = an invitation links to the web's HOLDFAST_PUBLIC_URL"),
});
export type SystemMailEnv = z.infer<typeof systemMailEnv>;

export interface SystemMail {
  url: string;
  from: string;
  appUrl?: string;
}

export function systemMailFrom(env: SystemMailEnv): SystemMail | null {
  if (!env.HOLDFAST_SYSTEM_SMTP_URL) return null;
  return { url: env.HOLDFAST_SYSTEM_SMTP_URL, from: env.HOLDFAST_SYSTEM_MAIL_FROM, ...(env.HOLDFAST_APP_URL ? { appUrl: env.HOLDFAST_APP_URL } : {}) };
}

/** A transport to the system mailbox through the egress guard (throws EgressRefusedError for a refused host). */
export async function systemMailTransport(mail: SystemMail, egress?: EgressOptions) {
  const u = new URL(mail.url);
  const scheme = u.protocol.replace(/:$/, "");
  const port = u.port ? Number(u.port) : scheme === "smtps" ? 465 : 587;
  return egressSmtpTransport(
    {
      host: u.hostname.replace(/^\[|\]$/g, ""),
      port,
      secure: scheme === "smtps",
      ignoreTLS: scheme === "smtp+plain",
      ...(u.username ? { auth: { user: decodeURIComponent(u.username), pass: decodeURIComponent(u.password) } } : {}),
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 20_000,
    },
    egress,
  );
}

/** The notice in words: which connection, why, how many runs wait on it, and what to do. */
export function noticeText(n: Pick<ClaimedNotice, "orgName" | "connectionName" | "reason" | "parkedRuns">, appUrl?: string): { subject: string; text: string } {
  const runs = n.parkedRuns === 1 ? "1 run is" : `${n.parkedRuns} runs are`;
  const link = appUrl ? `${appUrl.replace(/\/$/, "")}/settings` : "Settings in Holdfast";
  return {
    subject: `Reconnect "${n.connectionName}" in ${n.orgName}: ${runs} waiting`,
    text: [
      `The connection "${n.connectionName}" of ${n.orgName} stopped working and needs a person to reconnect it.`,
      n.reason ? `What happened: ${n.reason}` : "",
      `${runs} parked on it right now; they continue from where they stopped once it is reconnected, and nothing is lost meanwhile.`,
      `Reconnect it in ${link} (Connections -> Edit, enter the new password or token, Save).`,
      "You get this once per break, because you are an owner of the organisation.",
    ]
      .filter(Boolean)
      .join("\n\n"),
  };
}

export interface NoticeSendResult {
  sent: number;
  skipped: number;
  failed: number;
  retrying: number;
}

/**
 * One batch of the owners' emails for broken connections, run by the sweeper. Each notice is claimed under a lease
 * (a crashed sender's claim lapses and the next tick takes it again), sent to every owner through the egress guard
 * with a Message-ID derived from the notice (a rare resend after a crash between the send and its record reads as
 * the same message to mail clients), and recorded. Without a system mailbox the notices are marked skipped (the
 * banner still shows them). An organisation without owners' addresses is skipped with that said.
 */
export async function sendConnectionNoticesOnce(
  db: Db,
  mail: SystemMail | null,
  opts: { batch?: number; leaseSeconds?: number; maxAttempts?: number; egress?: EgressOptions } = {},
): Promise<NoticeSendResult> {
  const claimed = await inTx(db, (tx) => noticesClaimOwedEmail(tx, opts.batch ?? 20, opts.leaseSeconds ?? 60, opts.maxAttempts ?? 5));
  return sendClaimedNotices(db, mail, claimed, opts);
}

/** The sending half of `sendConnectionNoticesOnce`: notices already claimed (`noticesClaimOwedEmail`), each sent and recorded. */
export async function sendClaimedNotices(
  db: Db,
  mail: SystemMail | null,
  claimed: ClaimedNotice[],
  opts: { maxAttempts?: number; egress?: EgressOptions } = {},
): Promise<NoticeSendResult> {
  const maxAttempts = opts.maxAttempts ?? 5;
  const result: NoticeSendResult = { sent: 0, skipped: 0, failed: 0, retrying: 0 };
  if (claimed.length === 0) return result;
  let transport: Awaited<ReturnType<typeof systemMailTransport>> | null = null;
  try {
    for (const n of claimed) {
      if (!mail || n.owners.length === 0) {
        const error = mail ? "the organisation has no owner to write to" : "no system mailbox is configured (HOLDFAST_SYSTEM_SMTP_URL); shown in the app only";
        await inTx(db, (tx) => noticesSettleEmail(tx, n.id, n.attempts, { status: "skipped", error }));
        result.skipped++;
        continue;
      }
      try {
        transport ??= await systemMailTransport(mail, opts.egress);
        const { subject, text } = noticeText(n, mail.appUrl);
        const domain = new URL(mail.url).hostname || "holdfast";
        await transport.sendMail({ from: mail.from, to: n.owners, subject, text, messageId: `<notice-${n.id}@${domain}>` });
        await inTx(db, (tx) => noticesSettleEmail(tx, n.id, n.attempts, { status: "sent", to: n.owners }));
        result.sent++;
      } catch (error) {
        const refused = egressRefusalOf(error);
        const message = refused ? refused.message : (error as Error).message;
        const final = refused !== null || n.attempts >= maxAttempts;
        await inTx(db, (tx) => noticesSettleEmail(tx, n.id, n.attempts, { status: final ? "failed" : "pending", error: message }));
        if (final) result.failed++;
        else result.retrying++;
        if (refused) transport = null;
      }
    }
  } finally {
    transport?.close();
  }
  return result;
}
