// The intake row's bare server: node:http calling core's startRun exactly as the web's trigger route does (the same
// signature check, body parsing after it, delivery facts, the web's database role and organisation scope, first steps
// announced on Redis), without Next.js. Prints "listening <port>", stops on SIGTERM. Run by intake/main.ts.
import { organisationsIdBySlug } from "@holdfast/core/store";
import { deliveryContentType, deliveryStatus, startRun, UnparsedBody } from "@holdfast/core/run";
import { createDb, urlAsRole } from "@holdfast/db";
import { createWakePublisher } from "@holdfast/queue";
import { createServer } from "node:http";

const url = process.env.DATABASE_URL as string;
const orgSlug = process.env.INTAKE_ORG as string;
const automationSlug = process.env.INTAKE_AUTOMATION as string;
let orgId = "";
// The web's pool: its role (row-level security), its default size, the trigger's organisation as the explicit scope.
const db = createDb(urlAsRole(url, "holdfast_web"), {
  poolSize: Number(process.env.DB_POOL_SIZE ?? 10),
  applicationName: "holdfast-bench-bare",
  scope: async () => ({ orgIds: [orgId] }),
});
const wake = createWakePublisher({ redis: process.env.REDIS_URL ?? "redis://127.0.0.1:6379", prefix: process.env.QUEUE_PREFIX as string });
const operator = createDb(url, { poolSize: 1 });
orgId = (await organisationsIdBySlug(operator, orgSlug)) ?? "";
await operator.$disconnect();
if (!orgId) throw new Error(`no organisation "${orgSlug}"`);

const server = createServer(async (req, res) => {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const raw = Buffer.concat(chunks);
  const header = (n: string) => (req.headers[n] as string | undefined) ?? null;
  try {
    const outcome = await startRun(
      db,
      {
        orgSlug,
        automationSlug,
        rawBody: raw.toString("utf8"),
        body: new UnparsedBody(header("content-type")),
        headers: { "webhook-id": header("webhook-id"), "webhook-timestamp": header("webhook-timestamp"), "webhook-signature": header("webhook-signature") },
        via: "webhook",
        auth: { kind: "http", urlToken: null },
        delivery: { contentType: deliveryContentType(header("content-type")), bodyBytes: raw.byteLength },
      },
      { wake },
    );
    res.writeHead(outcome.duplicate ? deliveryStatus.duplicate : deliveryStatus.accepted, { "content-type": "application/json" });
    res.end(JSON.stringify({ runId: outcome.runId, duplicate: outcome.duplicate }));
  } catch (error) {
    res.writeHead(500, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: (error as Error).message }));
  }
});
server.keepAliveTimeout = 60_000;
server.listen(0, "127.0.0.1", () => console.log(`listening ${(server.address() as { port: number }).port}`));
process.on("SIGTERM", () => {
  server.close();
  void Promise.all([db.$disconnect(), wake.close()]).finally(() => process.exit(0));
});
