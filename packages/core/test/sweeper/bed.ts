import { createTestDatabase, publish } from "@holdfast/testkit";
import { advanceRun } from "../../src/run/engine/advance";
import { createLogger } from "../../src/base/log";
import { startRun } from "../../src/run/start/start-run";
import type { SweepContext } from "../../src/run/sweeper/service";
import { type Graph, parseGraph } from "../../src/versions/graph";
import { GraphCache } from "../../src/versions/graph-cache";

/** trigger -> one HTTP call (never made: no worker runs here) -> end. */
export const callGraph = (): Graph =>
  parseGraph({
    nodes: [
      { id: "t", kind: "trigger", config: { eventIdField: "id" } },
      { id: "call", kind: "http_request", config: { url: "http://127.0.0.1:9/unused", method: "POST" } },
      { id: "e", kind: "end" },
    ],
    edges: [
      { from: "t", to: "call" },
      { from: "call", to: "e" },
    ],
  });

/** trigger -> an hour's wait -> end. */
export const waitGraph = (): Graph =>
  parseGraph({
    nodes: [
      { id: "t", kind: "trigger", config: { eventIdField: "id" } },
      { id: "pause", kind: "wait", config: { rule: { kind: "duration", seconds: 3600 }, spreadSeconds: 0 } },
      { id: "e", kind: "end" },
    ],
    edges: [
      { from: "t", to: "pause" },
      { from: "pause", to: "e" },
    ],
  });

export type Bed = Awaited<ReturnType<typeof sweeperBed>>;

/** A database of the test file's own with the two automations published, and the context a service runs with. */
export async function sweeperBed() {
  const t = await createTestDatabase();
  const { orgId } = await publish(t.db, callGraph(), { automation: "call" });
  await publish(t.db, waitGraph(), { automation: "wait" });
  const graphs = new GraphCache();
  const rows = async (q: string, p: unknown[] = []) => (await t.sql.query(q, p)).rows;
  const ctx: SweepContext = { db: t.db, actor: "sweeper", graphs, systemMail: null };
  let n = 0;
  return {
    t,
    orgId,
    ctx,
    rows,
    /** A run of `automation` started and walked once: its first step (ready, or waiting for a wait). */
    async start(automation: "call" | "wait" = "call") {
      const body = { id: `evt_${++n}` };
      const headers = { "webhook-id": body.id, "webhook-timestamp": null, "webhook-signature": null };
      const { runId } = await startRun(t.db, { orgSlug: "acme", automationSlug: automation, rawBody: "{}", body, headers, via: "test", auth: { kind: "operator" } });
      await advanceRun(t.db, graphs, { orgId, runId, reason: "started" });
      const [step] = await rows("SELECT id FROM steps WHERE run_id = $1 AND status IN ('ready', 'waiting')", [runId]);
      if (!step) throw new Error(`run ${runId} has no open step`);
      return { runId, stepId: step.id as string };
    },
    /** Every wake-up written so far counts as delivered (the relay sent it): only the service's new ones are unsent. */
    async sendOutbox() {
      await rows("UPDATE outbox SET sent_at = now() WHERE sent_at IS NULL");
    },
    drop: () => t.drop(),
  };
}

export const silent = createLogger("test", "silent");
