import { createHmac, hkdfSync, timingSafeEqual } from "node:crypto";
import { z } from "zod";
import { secretKey } from "../../providers/connections/secrets";
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

function tokenKey(): Buffer {
  return Buffer.from(hkdfSync("sha256", secretKey(), Buffer.alloc(0), "holdfast approval button tokens v1", 32));
}

const sign = (body: string) => createHmac("sha256", tokenKey()).update(body).digest("base64url");

export function issueButtonToken(
  c: { orgId: string; runId: string; stepId: string; approvalId: string; decision: Decision; digest: string },
  expiresAt: Date,
  now: Date,
): string {
  const e = Math.floor(Math.min(expiresAt.getTime(), now.getTime() + maxLifeSeconds * 1000) / 1000);
  const body = Buffer.from(
    JSON.stringify({ p: purpose, o: c.orgId, r: c.runId, s: c.stepId, a: c.approvalId, x: c.decision, d: c.digest, e } satisfies ButtonClaims),
  ).toString("base64url");
  return `${body}.${sign(body)}`;
}

export type TokenCheck = { ok: true; claims: ButtonClaims } | { ok: false; reason: "malformed" | "bad_signature" | "expired" };

/** Verifies signature, purpose and expiry (`nowSeconds` from the database). Binding to the message is the caller's. */
export function verifyButtonToken(token: string, nowSeconds: number): TokenCheck {
  const [body, mac, extra] = token.split(".");
  if (!body || !mac || extra !== undefined) return { ok: false, reason: "malformed" };
  const want = Buffer.from(sign(body));
  const got = Buffer.from(mac);
  if (want.length !== got.length || !timingSafeEqual(want, got)) return { ok: false, reason: "bad_signature" };
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(body, "base64url").toString("utf8"));
  } catch {
    return { ok: false, reason: "malformed" };
  }
  const parsed = claims.safeParse(json);
  if (!parsed.success) return { ok: false, reason: "malformed" };
  if (parsed.data.e <= nowSeconds) return { ok: false, reason: "expired" };
  return { ok: true, claims: parsed.data };
}
