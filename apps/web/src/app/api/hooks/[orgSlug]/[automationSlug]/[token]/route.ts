import { db } from "../../../../../../server/db";
import { errorResponse, handleHook } from "../../../../../../server/hooks";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

// A trigger in url_token mode, for form tools that cannot sign: the token in the path is the credential.
interface Context {
  params: Promise<{ orgSlug: string; automationSlug: string; token: string }>;
}

export async function POST(request: Request, context: Context): Promise<Response> {
  return handleHook(db, await context.params, request);
}

const notAllowed = () =>
  errorResponse(405, "method_not_allowed", "trigger URLs accept POST only", { allow: "POST" });

export const GET = notAllowed;
export const PUT = notAllowed;
export const PATCH = notAllowed;
export const DELETE = notAllowed;
