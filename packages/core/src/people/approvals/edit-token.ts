import { z } from "zod";
import { signedTokens } from "../signed-token";

/**
 * The token on an approval message's Edit button, carried on into the edit modal's private_metadata: single purpose
 * (edit this approval's email), bound to one organisation, run, step, approval and the digest of the content shown,
 * expiring at the approval's deadline (at most 60 days). Its own key (a different HKDF info than the Approve / Reject
 * buttons'), so neither token opens the other's door. Expiry is judged by the caller against the database clock.
 */
const purpose = "approval.edit";
const claims = z.object({ p: z.literal(purpose), o: z.string(), r: z.string(), s: z.string(), a: z.string(), d: z.string(), e: z.number().int() }).strict();
export type EditClaims = z.infer<typeof claims>;

const maxLifeSeconds = 60 * 86_400;
const tokens = signedTokens("holdfast approval edit tokens v1");

export function issueEditToken(c: { orgId: string; runId: string; stepId: string; approvalId: string; digest: string }, expiresAt: Date, now: Date): string {
  const e = Math.floor(Math.min(expiresAt.getTime(), now.getTime() + maxLifeSeconds * 1000) / 1000);
  return tokens.issue({ p: purpose, o: c.orgId, r: c.runId, s: c.stepId, a: c.approvalId, d: c.digest, e } satisfies EditClaims);
}

export type EditTokenCheck = { ok: true; claims: EditClaims } | { ok: false; reason: "malformed" | "bad_signature" | "expired" };

/** Verifies signature, purpose and expiry (`nowSeconds` from the database). */
export function verifyEditToken(token: string, nowSeconds: number): EditTokenCheck {
  return tokens.verify(token, claims, nowSeconds);
}
