import { db } from "./db";
import { handleGoal } from "./goals";
import type { HookParams } from "./hooks";
import { errorResponse } from "./hooks";

/** The handlers both goal routes export: /api/goals/{org}/{automation} (signed) and .../{token} (url_token mode). */
export async function POST(request: Request, context: { params: Promise<HookParams> }): Promise<Response> {
  return handleGoal(db, await context.params, request);
}

const notAllowed = () => errorResponse(405, "method_not_allowed", "goal URLs accept POST only", { allow: "POST" });

export const GET = notAllowed;
export const PUT = notAllowed;
export const PATCH = notAllowed;
export const DELETE = notAllowed;
