import { InvalidPayloadError, parseJsonBounded } from "@holdfast/core/base";
import { env } from "../../../../env";
import { readBodyLimited } from "../../../../server/body";
import { errorResponse } from "../../../../server/hooks";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

/** The demo's payloads are a few hundred bytes. */
const maxBytes = 16 * 1024;

/**
 * The demo automation's http_request step calls this: it answers with what it was sent. Only when the deployment
 * runs the demo (HOLDFAST_DEMO_ECHO=1); otherwise it does not exist.
 */
export async function POST(request: Request): Promise<Response> {
  if (!env.HOLDFAST_DEMO_ECHO) return errorResponse(404, "not_found", "not found");
  const body = await readBodyLimited(request, maxBytes);
  if (!body.ok) return body.response;
  let received: unknown = null;
  const text = body.text();
  if (text.length > 0) {
    try {
      received = parseJsonBounded(text);
    } catch (error) {
      if (error instanceof InvalidPayloadError) return errorResponse(400, error.code, error.message);
      throw error;
    }
  }
  return Response.json({ received, idempotencyKey: request.headers.get("idempotency-key") });
}
