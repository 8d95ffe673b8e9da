import { db } from "../../../server/db";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

const timeoutMs = 3_000;

export async function GET(): Promise<Response> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      db.$queryRaw`SELECT 1`,
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error("database did not answer in time")), timeoutMs);
      }),
    ]);
    return Response.json({ ok: true, db: true }, { headers: { "cache-control": "no-store" } });
  } catch {
    return Response.json({ ok: false, db: false }, { status: 503, headers: { "cache-control": "no-store" } });
  } finally {
    clearTimeout(timer);
  }
}
