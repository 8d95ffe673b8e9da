import { env } from "../../../env";
import { checkBearer } from "../../../server/bearer";
import { db } from "../../../server/db";
import { notReadyBecause } from "../../../server/not-ready";
import { errorResponse } from "../../../server/hooks";
import { figuresAndReadiness } from "../../../server/metrics";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

/**
 * Readiness: 200 `{"status":"ready"}` or 503 `{"status":"not_ready"}` for anyone (a load balancer), nothing more.
 * Not ready: the database does not answer, or Redis (when wake-ups go through it) does not answer or may evict keys.
 * With `Authorization: Bearer $METRICS_TOKEN` the detailed readiness and health figures as well (a wrong token is
 * refused). `?live=1` only says the process answers.
 */
export async function GET(request: Request): Promise<Response> {
  const headers = { "cache-control": "no-store" };
  if (new URL(request.url).searchParams.get("live") === "1") return Response.json({ status: "live" }, { headers });
  const auth = checkBearer(request, env.METRICS_TOKEN);
  if (auth.kind === "wrong") return errorResponse(401, "unauthorized", "a valid bearer token is required", { "www-authenticate": "Bearer" });
  const detailed = auth.kind === "ok";
  try {
    const { figures, ready } = await figuresAndReadiness(db);
    const status = ready.ready ? 200 : 503;
    if (!detailed) return Response.json({ status: ready.ready ? "ready" : "not_ready" }, { status, headers });
    return Response.json({ status: ready.ready ? "ready" : "not_ready", ok: ready.ready, ready, figures }, { status, headers });
  } catch (error) {
    if (!detailed) return Response.json({ status: "not_ready" }, { status: 503, headers });
    return Response.json({ status: "not_ready", ok: false, ...notReadyBecause(error) }, { status: 503, headers });
  }
}

