import { db } from "../../../../../server/db";
import { errorResponse } from "../../../../../server/hooks";
import { handleSendgridInbound } from "../../../../../server/sendgrid";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export async function POST(request: Request): Promise<Response> {
  return handleSendgridInbound(db, request);
}

const notAllowed = () => errorResponse(405, "method_not_allowed", "SendGrid Inbound Parse posts; this address accepts POST only", { allow: "POST" });

export const GET = notAllowed;
export const PUT = notAllowed;
export const PATCH = notAllowed;
export const DELETE = notAllowed;
