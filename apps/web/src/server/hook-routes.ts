import { db, outages, wakePublisher } from "./db";
import { errorResponse, type HookParams, handleHook } from "./hooks";

/**
 * The handlers both trigger routes export: /api/hooks/{org}/{automation} (signed) and
 * /api/hooks/{org}/{automation}/{token} (url_token mode, for form tools that cannot sign).
 */
export async function POST(request: Request, context: { params: Promise<HookParams> }): Promise<Response> {
  return answerDelivery(await context.params, request);
}

/** One delivery to a trigger URL, answered with the web's database, outage watch and Redis publisher (also the web server's, hook-server.ts). */
export function answerDelivery(params: HookParams, request: Request): Promise<Response> {
  const wake = wakePublisher();
  return handleHook(db, params, request, { outages, ...(wake ? { wake } : {}) });
}

const notAllowed = () => errorResponse(405, "method_not_allowed", "trigger URLs accept POST only", { allow: "POST" });

export const GET = notAllowed;
export const PUT = notAllowed;
export const PATCH = notAllowed;
export const DELETE = notAllowed;
