import { db } from "../../../server/db";
import { figuresAndReadiness } from "../../../server/metrics";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

/**
 * Readiness and the health figures as JSON. 503 when not ready: the database does not answer, or Redis (when
 * wake-ups go through it) does not answer or may evict keys. `?live=1` only says the process answers.
 */
export async function GET(request: Request): Promise<Response> {
  const headers = { "cache-control": "no-store" };
  if (new URL(request.url).searchParams.get("live") === "1") return Response.json({ ok: true }, { headers });
  try {
    const { figures, ready } = await figuresAndReadiness(db);
    return Response.json({ ok: ready.ready, ready, figures }, { status: ready.ready ? 200 : 503, headers });
  } catch (error) {
    return Response.json({ ok: false, error: (error as Error).message }, { status: 503, headers });
  }
}
