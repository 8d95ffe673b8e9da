import { db } from "../../server/db";
import { metricsText } from "../../server/metrics";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

/** Prometheus text format: the health figures as gauges (server/metrics.ts). */
export async function GET(): Promise<Response> {
  const { text, contentType } = await metricsText(db);
  return new Response(text, { headers: { "content-type": contentType, "cache-control": "no-store" } });
}
