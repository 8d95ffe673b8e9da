import { env } from "../../env";
import { checkBearer } from "../../server/bearer";
import { db } from "../../server/db";
import { errorResponse } from "../../server/hooks";
import { metricsText } from "../../server/metrics";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

/**
 * Prometheus text format: the health figures as gauges (server/metrics.ts). Only for a scraper holding
 * `Authorization: Bearer $METRICS_TOKEN`; without METRICS_TOKEN the route does not exist.
 */
export async function GET(request: Request): Promise<Response> {
  const auth = checkBearer(request, env.METRICS_TOKEN);
  switch (auth.kind) {
    case "unset":
      return errorResponse(404, "not_found", "not found");
    case "missing":
    case "wrong":
      return errorResponse(401, "unauthorized", "a valid bearer token is required", { "www-authenticate": "Bearer" });
    case "ok": {
      const { text, contentType } = await metricsText(db);
      return new Response(text, { headers: { "content-type": contentType, "cache-control": "no-store" } });
    }
  }
}
