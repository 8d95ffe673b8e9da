import { env } from "../../../../env";
import { db } from "../../../../server/db";
import { errorResponse } from "../../../../server/hooks";
import { handleSignIn } from "../../../../server/sign-in";
import { signInThrottle } from "../../../../server/throttle";
import { answerOrUnavailable } from "../../../../server/unavailable";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export function POST(request: Request): Promise<Response> {
  return answerOrUnavailable(() => handleSignIn(
    {
      db,
      throttle: signInThrottle(),
      publicUrl: env.HOLDFAST_PUBLIC_URL,
      trustProxy: env.TRUST_PROXY,
      session: { days: env.SESSION_DAYS, idleMinutes: env.SESSION_IDLE_MINUTES },
    },
    request,
  ), "Holdfast cannot reach its database right now, so nobody can sign in: try again in a minute.");
}

const notAllowed = () => errorResponse(405, "method_not_allowed", "sign in with POST", { allow: "POST" });

export const GET = notAllowed;
export const PUT = notAllowed;
export const PATCH = notAllowed;
export const DELETE = notAllowed;
