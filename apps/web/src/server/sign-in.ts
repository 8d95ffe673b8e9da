import { jsonShapeProblem, parseFormBounded } from "@holdfast/core/base";
import { sessionCookie, signIn, type SignInThrottle, throttleMessage } from "@holdfast/core/people";
import type { Db } from "@holdfast/db";
import { NextResponse } from "next/server";
import { z } from "zod";
import { readBodyLimited } from "./body";
import { errorResponse } from "./hooks";
import { safeNext } from "./next-path";
import { clientAddress, isHttpsRequest } from "./request-info";

/** An email, a password and a path: far below this. */
const maxBytes = 8 * 1024;

const form = z.object({
  email: z.string().trim().email().max(320),
  password: z.string().min(1).max(1_000),
  next: z.string().max(2_000).optional(),
});

export const signInMessages = {
  wrong: "That email and password do not match an account.",
  invalid: "Enter an email address and a password.",
} as const;

export interface SignInDeps {
  db: Db;
  throttle: SignInThrottle;
  publicUrl: string;
  trustProxy: boolean;
  session: { days: number; idleMinutes: number };
}

/** A browser's form post from another site (login CSRF: signing the victim in as the attacker) is refused. */
function crossSite(request: Request): boolean {
  const origin = request.headers.get("origin");
  if (origin === null) return request.headers.get("sec-fetch-site") === "cross-site";
  const host = request.headers.get("x-forwarded-host") ?? request.headers.get("host");
  try {
    return new URL(origin).host !== host;
  } catch {
    return true;
  }
}

async function fields(request: Request): Promise<{ ok: true; values: Record<string, unknown> } | { ok: false; response: Response }> {
  const body = await readBodyLimited(request, maxBytes);
  if (!body.ok) return body;
  const type = request.headers.get("content-type") ?? "";
  // Three fields are expected: a form or JSON of any other shape is bounded (payload.ts) and then just not valid.
  const text = body.text();
  if (type.includes("application/x-www-form-urlencoded")) {
    try {
      return { ok: true, values: parseFormBounded(text, 20) };
    } catch {
      return { ok: true, values: {} };
    }
  }
  if (jsonShapeProblem(text, { maxDepth: 4, maxValues: 20 })) return { ok: true, values: {} };
  try {
    const parsed: unknown = JSON.parse(text);
    return { ok: true, values: parsed !== null && typeof parsed === "object" ? (parsed as Record<string, unknown>) : {} };
  } catch {
    return { ok: true, values: {} };
  }
}

/**
 * POST /api/auth/sign-in (JSON or form: email, password, next). 200 `{next}` with a new session cookie (the
 * request's old session, if any, is deleted); 400 for missing fields; 401 for a wrong email or password; 429 with
 * Retry-After while the account or the client address has used up its failures (people/auth/throttle.ts). A refused
 * attempt runs no password hash.
 */
export async function handleSignIn(deps: SignInDeps, request: Request): Promise<Response> {
  if (crossSite(request)) return errorResponse(403, "cross_site", "sign in from this site's own form");
  const read = await fields(request);
  if (!read.ok) return read.response;
  const parsed = form.safeParse(read.values);
  if (!parsed.success) return errorResponse(400, "invalid", signInMessages.invalid);
  const { email, password } = parsed.data;
  const next = safeNext(parsed.data.next);
  const address = clientAddress(request.headers, deps.trustProxy);

  const verdict = await deps.throttle.attempt(email, address);
  if (verdict.kind === "blocked") {
    return Response.json(
      { error: { code: "too_many_attempts", message: throttleMessage(verdict), scope: verdict.scope, retryAfterSeconds: verdict.retryAfterSeconds } },
      { status: 429, headers: { "retry-after": String(verdict.retryAfterSeconds), "cache-control": "no-store" } },
    );
  }
  const previousToken = cookieValue(request.headers.get("cookie"), sessionCookie);
  const session = await signIn(deps.db, email, password, { ...deps.session, previousToken });
  if (!session) return errorResponse(401, "wrong_credentials", signInMessages.wrong);
  await deps.throttle.succeeded(email, address);

  const response = NextResponse.json({ next }, { headers: { "cache-control": "no-store" } });
  response.cookies.set(sessionCookie, session.token, {
    httpOnly: true,
    secure: isHttpsRequest(request, deps.publicUrl),
    sameSite: "lax",
    path: "/",
    expires: session.expiresAt,
  });
  return response;
}

function cookieValue(header: string | null, name: string): string | undefined {
  for (const part of (header ?? "").split(";")) {
    const [k, ...v] = part.trim().split("=");
    if (k === name) return v.join("=");
  }
  return undefined;
}
