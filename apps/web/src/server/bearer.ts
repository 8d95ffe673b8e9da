import { createHash, timingSafeEqual } from "node:crypto";

export type BearerCheck = { kind: "unset" } | { kind: "missing" } | { kind: "wrong" } | { kind: "ok" };

const digest = (s: string) => createHash("sha256").update(s).digest();

/**
 * The request's `Authorization: Bearer <token>` against the configured token, in constant time (both sides are
 * hashed first, so neither the token's length nor its prefix leaks through timing).
 */
export function checkBearer(request: Request, token: string | undefined): BearerCheck {
  if (!token) return { kind: "unset" };
  const header = request.headers.get("authorization");
  if (header === null) return { kind: "missing" };
  const given = /^Bearer\s+(.+)$/i.exec(header.trim())?.[1] ?? "";
  return timingSafeEqual(digest(given), digest(token)) ? { kind: "ok" } : { kind: "wrong" };
}
