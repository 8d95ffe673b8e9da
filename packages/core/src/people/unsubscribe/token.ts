import { type Db, inTx, type Tx } from "@holdfast/db";
import { z } from "zod";
import { signedTokens } from "../signed-token";
import { organisationsNameById } from "../../store/sql/organisations";
import { emailMessagesRecordOutcome } from "../../store/sql/email-messages";
import { suppressionsAddOnce } from "../../store/sql/suppressions";

/**
 * One-click unsubscribe (RFC 8058): every email a real run sends carries `List-Unsubscribe: <…/api/unsubscribe/<token>>`.
 * The token binds one organisation, the recipient's address (lower-cased) and the message's effect key with an
 * HMAC-SHA256 keyed from HOLDFAST_SECRET_KEY, so nobody can make a link that suppresses an address they were not sent
 * a message at. No expiry: an unsubscribe link must keep working for as long as the email sits in a mailbox.
 * Test runs carry no link (run/connectors/send-email.ts), so "Send to me" can never suppress a real contact.
 */
const purpose = "unsubscribe";
const claims = z.object({ p: z.literal(purpose), o: z.string().min(1).max(100), m: z.string().email().max(320), k: z.string().min(1).max(500) }).strict();
export type UnsubscribeClaims = z.infer<typeof claims>;

const tokens = signedTokens("holdfast unsubscribe links v1");

export function issueUnsubscribeToken(c: { orgId: string; email: string; effectKey: string }): string {
  return tokens.issue({ p: purpose, o: c.orgId, m: c.email.toLowerCase(), k: c.effectKey } satisfies UnsubscribeClaims);
}

export type UnsubscribeCheck = { ok: true; claims: UnsubscribeClaims } | { ok: false; reason: "malformed" | "bad_signature" };

export function verifyUnsubscribeToken(token: string): UnsubscribeCheck {
  if (token.length > 2_000) return { ok: false, reason: "malformed" };
  const opened = tokens.open(token);
  if (!opened.ok) return opened;
  const parsed = claims.safeParse(opened.json);
  return parsed.success ? { ok: true, claims: parsed.data } : { ok: false, reason: "malformed" };
}

/** The web's public address, from which the link is made (unset: emails carry no unsubscribe link). */
export function unsubscribeBase(source: Readonly<Record<string, string | undefined>> = process.env): string | null {
  const raw = source.HOLDFAST_PUBLIC_URL?.trim();
  if (!raw || !URL.canParse(raw)) return null;
  return raw.replace(/\/$/, "");
}

export const unsubscribeUrl = (base: string, c: { orgId: string; email: string; effectKey: string }) => `${base}/api/unsubscribe/${issueUnsubscribeToken(c)}`;

/** "ma***@example.com": enough for the person to recognise their address, not enough to read it off a shared screen. */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf("@");
  const local = email.slice(0, at);
  return `${local.slice(0, Math.min(2, Math.max(1, local.length - 1)))}***${email.slice(at)}`;
}

export const unsubscribeReason = "unsubscribed by one click";

/** What the confirmation page shows: the masked address and the organisation's name. */
export async function unsubscribePreview(db: Db | Tx, c: UnsubscribeClaims): Promise<{ masked: string; orgName: string }> {
  return { masked: maskEmail(c.m), orgName: (await organisationsNameById(db, c.o)) ?? "this sender" };
}

/**
 * Suppresses the address at once; "already" when it was suppressed before (a repeated POST changes nothing). The
 * message the link came in is marked unsubscribed in the same transaction (its first unsubscribe counts once).
 */
export function unsubscribeOnce(db: Db, c: UnsubscribeClaims): Promise<"unsubscribed" | "already"> {
  return inTx(db, async (tx) => {
    const added = await suppressionsAddOnce(tx, c.o, c.m, unsubscribeReason);
    await emailMessagesRecordOutcome(tx, c.o, c.k, "unsubscribed");
    return added ? "unsubscribed" : "already";
  });
}
