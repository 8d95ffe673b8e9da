import { hkdfSync } from "node:crypto";
import { type Db, inTx, type Tx } from "@holdfast/db";
import { secretKey } from "../../store/keys/secret-key";
import { emailMessagesByStep, emailMessagesRecordOutcome, type SentMessageRef } from "../../store/sql/email-messages";
import { suppressionsAddOnce } from "../../store/sql/suppressions";
import { parseRoutingToken, replyRoutingToken, routingTokenMatches, type RouteRef } from "../signals/routing";

/**
 * Bounces (issue 43): every email a real run sends has a VERP envelope sender (MAIL FROM, so the Return-Path) of
 * `bounce+<token>@<INBOUND_EMAIL_DOMAIN>`, the token naming the send step with a MAC over (organisation, run, step)
 * as a reply address does (people/signals/routing.ts) but under a key of its own. A delivery status notification
 * comes back to that address, so mail-in matches it to its message by the address it was sent to, never by what its
 * body claims. A permanent failure (5.x.x) suppresses the address; a transient one (4.x.x) is recorded only.
 */
let bounceKey: Buffer | undefined;
const key = () => (bounceKey ??= Buffer.from(hkdfSync("sha256", secretKey(), Buffer.alloc(0), "holdfast bounce routing v1", 32)));

export const bounceAddress = (ref: RouteRef, domain: string) => `bounce+${replyRoutingToken(ref, key())}@${domain}`;

/** The token of a bounce address (`bounce+<token>@any.domain`, any case), or null when the address is not one. */
export function bounceTokenOf(address: string): string | null {
  const m = /^\s*<?bounce\+([a-z2-7]{42})@[^\s@>]+>?\s*$/i.exec(address);
  return m?.[1] ? m[1].toLowerCase() : null;
}

/** The sent message a bounce address names, when this deployment issued it for exactly that message; else null. */
export async function resolveBounceAddress(db: Db | Tx, address: string): Promise<SentMessageRef | null> {
  const token = bounceTokenOf(address);
  const parsed = token ? parseRoutingToken(token) : null;
  if (!token || !parsed) return null;
  const sent = await emailMessagesByStep(db as Tx, parsed.stepId);
  return sent && routingTokenMatches(token, sent, key()) ? sent : null;
}

export interface DsnVerdict {
  /** The RFC 3463 status, "5.1.1". */
  status: string;
  permanent: boolean;
  /** The Diagnostic-Code in the receiving server's words, shortened. */
  detail: string;
}

/**
 * The first failed recipient of a delivery status report (RFC 3464: the per-recipient fields of its
 * message/delivery-status part, each block with an Action and a Status): its Status and Diagnostic-Code. Null when
 * nothing failed (a "delayed", "delivered", "relayed" or "expanded" report) or no block has both: not a bounce.
 */
export function readDeliveryStatus(report: string): DsnVerdict | null {
  const unfolded = report.slice(0, 100_000).replace(/\r\n/g, "\n").replace(/\n[ \t]+/g, " ");
  for (const block of unfolded.split(/\n\s*\n/)) {
    const field = (name: string) => new RegExp(`^${name}:[ \\t]*(.*)$`, "im").exec(block)?.[1]?.trim() ?? null;
    const status = /^([45])\.(\d{1,3})\.(\d{1,3})(?=$|[\s(])/.exec(field("Status") ?? "");
    if (!status || (field("Action") ?? "").toLowerCase() !== "failed") continue;
    const detail = (field("Diagnostic-Code") ?? "the receiving server gave no reason").replace(/^smtp;\s*/i, "");
    return { status: `${status[1]}.${status[2]}.${status[3]}`, permanent: status[1] === "5", detail: detail.slice(0, 500) };
  }
  return null;
}

export const bounceSuppressionReason = (v: DsnVerdict) => `bounced (${v.status}): the address does not take mail`;

export type BounceOutcome = { kind: "bounced"; first: boolean; suppressed: boolean; runId: string } | { kind: "not_a_bounce" };

/**
 * A delivery status report that came back to the message's bounce address: the message is marked bounced, and a
 * permanent failure suppresses its recipient, in one transaction. A repeated report changes nothing more.
 */
export async function recordBounce(db: Db, sent: SentMessageRef, report: string): Promise<BounceOutcome> {
  const verdict = readDeliveryStatus(report);
  if (!verdict) return { kind: "not_a_bounce" };
  return inTx(db, async (tx) => {
    const first = (await emailMessagesRecordOutcome(tx, sent.orgId, sent.effectKey, "bounced", { status: verdict.status, detail: verdict.detail })) === "first";
    const suppressed = verdict.permanent && /^[^\s@]+@[^\s@]+$/.test(sent.recipient) && (await suppressionsAddOnce(tx, sent.orgId, sent.recipient, bounceSuppressionReason(verdict)));
    return { kind: "bounced", first, suppressed, runId: sent.runId };
  });
}
