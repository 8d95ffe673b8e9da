import { db } from "../../../../../server/db";
import { errorResponse } from "../../../../../server/hooks";
import { handleSendgridInbound } from "../../../../../server/sendgrid";
import { answerOrUnavailable } from "../../../../../server/unavailable";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export async function POST(request: Request): Promise<Response> {
  return answerOrUnavailable(
    () => handleSendgridInbound(db, request),
    "the service cannot reach its database right now: send this email again later (nothing was stored)",
  );
}

const notAllowed = () => errorResponse(405, "method_not_allowed", "SendGrid Inbound Parse posts; this address accepts POST only", { allow: "POST" });

export const GET = notAllowed;
export const PUT = notAllowed;
export const PATCH = notAllowed;
export const DELETE = notAllowed;
