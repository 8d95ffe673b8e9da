import { type Db, inTx } from "@holdfast/db";
import addressparser from "nodemailer/lib/addressparser";
import { z } from "zod";
import { crashpoint } from "../../base/crash";
import { NotFoundError } from "../../base/errors";
import { emailMessagesKeysByMessageIds, emailMessagesRecordOutcome } from "../../store/sql/email-messages";
import { organisationsIdBySlug } from "../../store/sql/organisations";
import { runMeetsGoal } from "../goals/run-goal";
import { signalsConsumeWaiting, signalsFindSentMessages, signalsInsert, signalsWaitingFor } from "../../store/sql/signals";

/** An inbound email as an inbound-email webhook (or the SMTP receiver) hands it over. */
export const inboundEmail = z
  .object({
    messageId: z.string().min(3).max(998),
    from: z.string().min(3).max(998),
    to: z.string().max(4000).optional(),
    subject: z.string().max(998).default(""),
    inReplyTo: z.string().max(998).optional(),
    references: z.union([z.string().max(20_000), z.array(z.string().max(998)).max(200)]).optional(),
    text: z.string().max(200_000).default(""),
  })
  .strict();
export type InboundEmail = z.infer<typeof inboundEmail>;

/** Message-IDs in a header value, normalised to `<id>` (the form our Message-IDs are stored in). */
export function messageIds(value: string | string[] | undefined): string[] {
  const text = Array.isArray(value) ? value.join(" ") : (value ?? "");
  return [...text.matchAll(/<?([^<>\s]+@[^<>\s]+)>?/g)].map((m) => `<${m[1]}>`);
}

/**
 * The one address a From header names, lower-cased and bare (`"Maya" <MAYA@Example.com>` -> `maya@example.com`);
 * null when it names none or several (nodemailer's RFC 5322 address parser: quotes, comments, groups).
 */
export function senderAddress(from: string): string | null {
  const addresses = addressparser(from, { flatten: true }).filter((a) => a.address);
  const only = addresses.length === 1 ? addresses[0]?.address.trim().toLowerCase() : undefined;
  return only && /^[^\s@]+@[^\s@]+$/.test(only) ? only : null;
}

/**
 * Why a reply to these sent messages is not believed, or null if it is: only the person an email went to may
 * answer it. Anyone who learns a Message-ID can put it in In-Reply-To; the From of a forged reply is someone else.
 * (From can be forged too; rejecting mail that fails SPF/DMARC is the inbound provider's or relay's job.)
 */
export function foreignSenderReason(sender: string | null, from: string, sent: { recipient: string | null }[]): string | null {
  if (sent.length === 0 || sent.some((m) => m.recipient !== null && m.recipient === sender)) return null;
  const recipient = sent[0]?.recipient ?? "(unknown)";
  if (sender === null) return `sender ${JSON.stringify(from)} is not one email address; the message it replies to went to ${recipient}`;
  return `sender ${sender} is not the recipient ${recipient} of the message it replies to`;
}

export interface IngestOutcome {
  signalId: string | null;
  /** The same message was delivered before: stored once, nothing new happened. */
  duplicate: boolean;
  /** A waiting step consumed it now (false: kept for when its run gets there, or unmatched). */
  consumed: boolean;
  runId: string | null;
  /** Stored but never to be consumed, and why (a sender who is not the recipient of the message it answers). */
  unmatchedReason: string | null;
}

/**
 * A reply comes in. Stored once per Message-ID for the organisation, correlated by In-Reply-To and References with
 * the Message-IDs of the emails runs sent; if a step is waiting for it, consumed in the same transaction (the step
 * settles, its deadline closes, the run is woken). Otherwise it is kept: a run that reaches its reply wait later
 * consumes it then, and one that never does leaves it visible as unmatched. A reply from anyone but the recipient
 * of the email it answers is stored as unmatched with the reason (signals.unmatched_reason, and a signal.refused
 * event on that run's timeline) and never consumed, now or later. `routedMessageIds`: the Message-IDs named by the
 * verified routing addresses the reply was sent to, correlated like In-Reply-To.
 */
export async function ingestEmailReply(
  db: Db,
  orgSlug: string,
  email: InboundEmail,
  options: { routedMessageIds?: string[] } = {},
): Promise<IngestOutcome> {
  // A verified routing address (people/signals/routing.ts) names the message it answers as surely as In-Reply-To, and first.
  const routed = options.routedMessageIds ?? [];
  const keys = [...new Set([...routed, ...messageIds(email.inReplyTo), ...messageIds(email.references)])];
  const identity = messageIds(email.messageId)[0] ?? email.messageId;
  const sender = senderAddress(email.from);
  return inTx(db, async (tx) => {
    const orgId = await organisationsIdBySlug(tx, orgSlug);
    if (!orgId) throw new NotFoundError("org_not_found", `organisation "${orgSlug}"`);
    const found = await signalsFindSentMessages(tx, orgId, keys);
    // The message it answers first: In-Reply-To, then References from the newest.
    const order = [...routed, ...messageIds(email.inReplyTo), ...messageIds(email.references).reverse()];
    const sent = [...new Set(order)].flatMap((k) => found.filter((m) => m.messageId === k));
    const reason = foreignSenderReason(sender, email.from, sent);
    const answered = sent[0];
    const signalId = await signalsInsert(tx, {
      orgId,
      kind: "email_reply",
      identity,
      correlationKeys: keys,
      payload: { messageId: identity, from: email.from, to: email.to ?? null, subject: email.subject, text: email.text },
      sender,
      ...(reason && answered ? { unmatched: { runId: answered.runId, reason, messageId: answered.messageId } } : {}),
    });
    if (!signalId) return { signalId: null, duplicate: true, consumed: false, runId: null, unmatchedReason: null };
    if (reason) {
      crashpoint("signal.before_commit");
      return { signalId, duplicate: false, consumed: false, runId: null, unmatchedReason: reason };
    }
    // The message it answers is marked replied (once: its first reply counts, with the run's first reply).
    for (const key of answered ? await emailMessagesKeysByMessageIds(tx, orgId, [answered.messageId]) : []) {
      await emailMessagesRecordOutcome(tx, orgId, key, "replied");
    }
    // A reply may be the automation's goal: the contact's runs of it end converted, with this reply's commit.
    if (answered) await runMeetsGoal(tx, orgId, answered.runId, "replied");
    for (const step of await signalsWaitingFor(tx, orgId, keys)) {
      if (await signalsConsumeWaiting(tx, orgId, step.id, "signal")) {
        crashpoint("signal.before_commit");
        return { signalId, duplicate: false, consumed: true, runId: step.runId, unmatchedReason: null };
      }
    }
    crashpoint("signal.before_commit");
    return { signalId, duplicate: false, consumed: false, runId: null, unmatchedReason: null };
  });
}
