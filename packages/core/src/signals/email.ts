import { type Db, inTx } from "@holdfast/db";
import { z } from "zod";
import { crashpoint } from "../crash";
import { NotFoundError } from "../errors";
import { signalsConsumeWaiting, signalsInsert, signalsWaitingFor } from "../sql/signals";

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

export interface IngestOutcome {
  signalId: string | null;
  /** The same message was delivered before: stored once, nothing new happened. */
  duplicate: boolean;
  /** A waiting step consumed it now (false: kept for when its run gets there, or unmatched). */
  consumed: boolean;
  runId: string | null;
}

/**
 * A reply comes in. Stored once per Message-ID for the organisation, correlated by In-Reply-To and References with
 * the Message-IDs of the emails runs sent; if a step is waiting for it, consumed in the same transaction (the step
 * settles, its deadline closes, the run is woken). Otherwise it is kept: a run that reaches its reply wait later
 * consumes it then, and one that never does leaves it visible as unmatched.
 */
export async function ingestEmailReply(db: Db, orgSlug: string, email: InboundEmail): Promise<IngestOutcome> {
  const keys = [...new Set([...messageIds(email.inReplyTo), ...messageIds(email.references)])];
  const identity = messageIds(email.messageId)[0] ?? email.messageId;
  return inTx(db, async (tx) => {
    const orgs = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM organisations WHERE slug = ${orgSlug}`;
    const orgId = orgs[0]?.id;
    if (!orgId) throw new NotFoundError("org_not_found", `organisation "${orgSlug}"`);
    const signalId = await signalsInsert(tx, {
      orgId,
      kind: "email_reply",
      identity,
      correlationKeys: keys,
      payload: { messageId: identity, from: email.from, to: email.to ?? null, subject: email.subject, text: email.text },
    });
    if (!signalId) return { signalId: null, duplicate: true, consumed: false, runId: null };
    for (const step of await signalsWaitingFor(tx, orgId, keys)) {
      if (await signalsConsumeWaiting(tx, orgId, step.id, "signal")) {
        crashpoint("signal.before_commit");
        return { signalId, duplicate: false, consumed: true, runId: step.runId };
      }
    }
    crashpoint("signal.before_commit");
    return { signalId, duplicate: false, consumed: false, runId: null };
  });
}
