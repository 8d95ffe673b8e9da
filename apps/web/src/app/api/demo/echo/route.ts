import { errorResponse } from "../../../../server/hooks";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

/** The demo automation's http_request step calls this: it answers with what it was sent. */
export async function POST(request: Request): Promise<Response> {
  let received: unknown = null;
  const text = await request.text();
  if (text.length > 0) {
    try {
      received = JSON.parse(text);
    } catch {
      return errorResponse(400, "invalid_json", "the body is not valid JSON");
    }
  }
  return Response.json({ received, idempotencyKey: request.headers.get("idempotency-key") });
}
