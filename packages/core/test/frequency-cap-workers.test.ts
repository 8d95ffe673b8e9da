import { publish, type SmtpTarget, startSmtpTarget, startTestDeployment, startTestRun, type TestDeployment, waitFor } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createConnection } from "../src/providers/connections/connect";
import { automationsSetCappedAction } from "../src/store/sql/automations-cap";
import { sendingRulesSetFrequencyCap } from "../src/store/sql/sending-rules";
import { parseGraph } from "../src/versions/graph";

/**
 * Issue 44's race through the deployment's own processes: two lane-worker processes (io lane), the relay and the
 * engine; 100 pairs of runs (two automations, one address per pair, cap 1 a day) started at the same instant. Exactly
 * one email per address reaches the SMTP sink; the other run is held (wait, half the pairs) or skipped (skip, the
 * other half) with the cap's words.
 */
let d: TestDeployment;
let smtp: SmtpTarget;
const races = 100;

const emailGraph = parseGraph({
  nodes: [
    { id: "t", kind: "trigger", config: { eventIdField: "id" } },
    { id: "send", kind: "send_email", config: { connection: "mailbox", subject: "Hello", text: "Hi" } },
    { id: "e", kind: "end" },
  ],
  edges: [
    { from: "t", to: "send" },
    { from: "send", to: "e" },
  ],
});

beforeAll(async () => {
  d = await startTestDeployment();
  // The server answers DATA after 200 ms, so the other send of a pair is often claimed while the first is sending.
  smtp = d.closeAtStop(await startSmtpTarget({ replyDelayMs: 200 }));
  let orgId = "";
  for (const slug of ["news-w", "offers-w", "news-s", "offers-s"]) {
    const seeded = await publish(d.t.db, emailGraph, { automation: slug });
    orgId = seeded.orgId;
    await automationsSetCappedAction(d.t.db, orgId, seeded.automationId, slug.endsWith("-s") ? "skip" : "wait");
  }
  await createConnection(d.t.db, { orgId, kind: "smtp", name: "mailbox", config: { host: "127.0.0.1", port: smtp.port, tls: "none", from: "Acme <hello@acme.test>" }, secret: null });
  await sendingRulesSetFrequencyCap(d.t.db, orgId, { count: 1, periodHours: 24 }, "user:owner@acme.test");
}, 120_000);
afterAll(async () => d?.stop());

describe("the frequency cap with lane-worker processes", () => {
  it(`${races} pairs at one instant: one email per address; the other held or skipped, saying why`, { timeout: 180_000 }, async () => {
    const env = d.quickEnv({ LANE_LEASE_MS: "10000" });
    await d.startApps([{ app: "relay", env }, { app: "engine", env }, { app: "lane-worker", env }, { app: "lane-worker", env }], 90_000);
    const began = Date.now();
    const pairs = await Promise.all(
      Array.from({ length: races }, async (_, race) => {
        const mode = race % 2 === 0 ? "w" : "s";
        const email = `p${race}@race.test`;
        const [a, b] = await Promise.all([`news-${mode}`, `offers-${mode}`].map((automation) => startTestRun(d.t.db, automation, { id: `${automation}-${race}`, email })));
        return { race, mode, email, runIds: [a as string, b as string] };
      }),
    );
    // Every send step settled (done) or held (given back with a step.deferred row).
    await waitFor(
      async () => {
        const [row] = await d.q(
          `SELECT count(*)::int AS n FROM steps s WHERE s.node_id = 'send'
             AND (s.status = 'done' OR EXISTS (SELECT 1 FROM run_events e WHERE e.step_id = s.id AND e.type = 'step.deferred'))`,
        );
        return row.n === races * 2 || undefined;
      },
      120_000,
      "every send settled or held",
    );
    const seconds = (Date.now() - began) / 1000;
    let overlapped = 0;
    let twoWorkers = 0;
    for (const p of pairs) {
      expect(smtp.received.filter((m) => m.to.includes(p.email)), `pair ${p.race}`).toHaveLength(1);
      const counted = await d.q("SELECT run_id, a.slug, sent_at + interval '24 hours' AS until FROM contact_sends c JOIN automations a ON a.id = c.automation_id WHERE address = $1 AND released_at IS NULL", [p.email]);
      expect(counted).toHaveLength(1);
      const capped = p.runIds.find((id) => id !== counted[0].run_id) as string;
      const words = new RegExp(`^frequency cap: at most 1 email per 24 hours to this address; one went out at .* UTC from "${counted[0].slug}"`);
      if (p.mode === "w") {
        const [held] = await d.q("SELECT data FROM run_events WHERE run_id = $1 AND type = 'step.deferred'", [capped]);
        expect(held?.data.hold.words).toMatch(words);
        expect(held?.data.hold.until).toBe((counted[0].until as Date).toISOString());
      } else {
        const [step] = await d.q("SELECT output FROM steps WHERE run_id = $1 AND node_id = 'send'", [capped]);
        expect(step?.output.skipped).toBe(true);
        expect(step?.output.reason).toMatch(words);
      }
      const [times] = await d.q(
        `SELECT max(e.at) FILTER (WHERE e.type = 'step.claimed') AS claimed, min(e.at) FILTER (WHERE e.type IN ('step.succeeded', 'step.skipped', 'step.deferred', 'step.failed')) AS settled,
                count(DISTINCT e.worker) FILTER (WHERE e.type = 'step.claimed') AS workers
         FROM run_events e JOIN steps s ON s.id = e.step_id WHERE e.run_id = ANY($1) AND s.node_id = 'send'`,
        [p.runIds],
      );
      if (times.claimed < times.settled) overlapped++;
      if (Number(times.workers) === 2) twoWorkers++;
    }
    console.log(`frequency cap, lane-worker processes: ${races} pairs in ${seconds.toFixed(1)} s; both claimed before either settled in ${overlapped}; claimed by two processes in ${twoWorkers}`);
    // How often the pair's claims overlap here depends on the relay's and the workers' timing (a few in 100 on a busy
    // machine): reported, not asserted. frequency-cap-race.test.ts asserts the overlap, and the barrier test the lock.
    expect(smtp.received).toHaveLength(races);
  });
});
