import { z } from "zod";
import { signedTokens } from "../signed-token";
import type { Decision } from "../../versions/graph";

/**
 * The token on a Slack button: single purpose (decide this approval this way), bound to one organisation, run, step
 * and content digest, and short-lived (it expires at the approval's deadline: a button works exactly as long as the
 * approval can be decided). HMAC-SHA256 with a key
 * derived from HOLDFAST_SECRET_KEY; expiry is judged by the caller against the database clock.
 */
const purpose = "approval.decide";
const claims = z
  .object({
    p: z.literal(purpose),
    o: z.string(),
    r: z.string(),
    s: z.string(),
    a: z.string(),
    x: z.enum(["approved", "rejected"]),
    d: z.string(),
    e: z.number().int(),
  })
  .strict();
export type ButtonClaims = z.infer<typeof claims>;

/** An approval's deadline (escalation included) is at most 60 days away; a token never outlives that. */
const maxLifeSeconds = 60 * 86_400;

const tokens = signedTokens("holdfast approval button tokens v1");

export function issueButtonToken(
  c: { orgId: string; runId: string; stepId: string; approvalId: string; decision: Decision; digest: string },
  expiresAt: Date,
  now: Date,
): string {
  const e = Math.floor(Math.min(expiresAt.getTime(), now.getTime() + maxLifeSeconds * 1000) / 1000);
  return tokens.issue({ p: purpose, o: c.orgId, r: c.runId, s: c.stepId, a: c.approvalId, x: c.decision, d: c.digest, e } satisfies ButtonClaims);
}

export type TokenCheck = { ok: true; claims: ButtonClaims } | { ok: false; reason: "malformed" | "bad_signature" | "expired" };

/** Verifies signature, purpose and expiry (`nowSeconds` from the database). Binding to the message is the caller's. */
export function verifyButtonToken(token: string, nowSeconds: number): TokenCheck {
  return tokens.verify(token, claims, nowSeconds);
}
