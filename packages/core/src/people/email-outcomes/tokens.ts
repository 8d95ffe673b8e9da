import { z } from "zod";
import { signedTokens } from "../signed-token";

/**
 * The tokens of tracked links and the open pixel (issue 43): `<claims>.<HMAC>` (people/signed-token.ts) under a key
 * of their own. A click token binds the organisation, the message's effect key and the exact target, so the redirect
 * goes only to a link that was in that message: change one character of the target, the message or the signature and
 * the token no longer opens. No expiry: a link must keep working for as long as the email sits in a mailbox.
 */
const tokens = signedTokens("holdfast email tracking v1");
const maxTarget = 2_048;
export const maxTrackingToken = 4_000;

/**
 * True for a target a tracked link may lead to: an absolute http(s) URL, written out in full (`https://host...`),
 * with nothing a browser would read differently from a URL parser (no spaces, control characters or backslashes).
 */
export function isTrackableTarget(url: string): boolean {
  if (url.length > maxTarget || !/^https?:\/\/[^/\\?#\s]/i.test(url)) return false;
  if ([...url].some((c) => c === "\\" || c.charCodeAt(0) <= 0x20 || c.charCodeAt(0) === 0x7f)) return false;
  if (!URL.canParse(url)) return false;
  const parsed = new URL(url);
  return (parsed.protocol === "https:" || parsed.protocol === "http:") && parsed.hostname !== "";
}

const key = z.string().min(1).max(500);
const org = z.string().min(1).max(100);
const clickClaims = z.object({ p: z.literal("click"), o: org, k: key, u: z.string().min(1).max(maxTarget).refine(isTrackableTarget) }).strict();
const openClaims = z.object({ p: z.literal("open"), o: org, k: key }).strict();
export type ClickClaims = z.infer<typeof clickClaims>;
export type OpenClaims = z.infer<typeof openClaims>;

export interface MessageRef {
  orgId: string;
  effectKey: string;
}

export const issueClickToken = (m: MessageRef, url: string) => tokens.issue({ p: "click", o: m.orgId, k: m.effectKey, u: url } satisfies ClickClaims);
export const issueOpenToken = (m: MessageRef) => tokens.issue({ p: "open", o: m.orgId, k: m.effectKey } satisfies OpenClaims);

function open<T>(token: string, schema: z.ZodType<T>): T | null {
  if (token.length > maxTrackingToken) return null;
  const opened = tokens.open(token);
  if (!opened.ok) return null;
  const parsed = schema.safeParse(opened.json);
  return parsed.success ? parsed.data : null;
}

/** The claims of a click token this deployment issued, or null (forged, changed, cut short, too long). */
export const verifyClickToken = (token: string): ClickClaims | null => open(token, clickClaims);
export const verifyOpenToken = (token: string): OpenClaims | null => open(token, openClaims);
