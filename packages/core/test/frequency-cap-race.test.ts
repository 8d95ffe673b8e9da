import { createTestDatabase, publish, type SmtpTarget, startSmtpTarget, type TestDatabase } from "@holdfast/testkit";
import { createDb, type Db } from "@holdfast/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lanes } from "../src/base/catalog";
import { createLogger } from "../src/base/log";
import { createConnection } from "../src/providers/connections/connect";
import { buildStory } from "../src/run/runs/story";
import { startRun } from "../src/run/start/start-run";
import { StepRunner } from "../src/run/steps/runner";
import { automationsSetCappedAction } from "../src/store/sql/automations-cap";
import { runEventsForRun } from "../src/store/sql/run-events";
import { runsDetailHead } from "../src/store/sql/runs-view";
import { sendingRulesSetFrequencyCap } from "../src/store/sql/sending-rules";
import { stepsViewOfRun } from "../src/store/sql/steps-view";
import { parseGraph } from "../src/versions/graph";
import { GraphCache } from "../src/versions/graph-cache";

/**
 * Issue 44's race: two automations send to one contact at the same instant with a cap of 1 a day, 100 times, each
 * pair run at once by two step runners (the lane worker's runner) on two database clients of their own, as two
 * lane-worker processes would: exactly one email per race reaches the SMTP sink, and the other run says why.
 */
let t: TestDatabase;
let smtp: SmtpTarget;
let orgId: string;
const ids: Record<string, string> = {};
const workers: Db[] = [];
const log = createLogger("test", "silent");
const rows = async (q: string, p: unknown[] = []) => (await t.sql.query(q, p)).rows;
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
  t = await createTestDatabase();
  smtp = await startSmtpTarget();
  for (const slug of ["news", "offers"]) {
    const seeded = await publish(t.db, emailGraph, { automation: slug });
    orgId = seeded.orgId;
    ids[slug] = seeded.automationId;
  }
  const config = { host: "127.0.0.1", port: smtp.port, tls: "none", from: "Acme <hello@acme.test>" };
  await createConnection(t.db, { orgId, kind: "smtp", name: "mailbox", config, secret: null });
  await sendingRulesSetFrequencyCap(t.db, orgId, { count: 1, periodHours: 24 }, "user:owner@acme.test");
  for (let i = 0; i < 2; i++) workers.push(createDb(t.url, { poolSize: 4, applicationName: `caps-worker-${i}` }));
});
afterAll(async () => {
  for (const w of workers) await w.$disconnect();
  await smtp?.close();
  await t?.drop();
});

async function start(automation: string, email: string, race: number) {
  const { runId } = await startRun(t.db, {
    orgSlug: "acme",
    automationSlug: automation,
    rawBody: "{}",
    body: { id: `${automation}-${race}`, email },
    headers: { "webhook-id": null, "webhook-timestamp": null, "webhook-signature": null },
    via: "test",
    auth: { kind: "operator" },
  });
  const [{ id: stepId }] = await rows("SELECT id FROM steps WHERE run_id = $1 AND node_id = 'send'", [runId]);
  return { runId, stepId: stepId as string, automation };
}

/** The run page's story, built from the rows the page loads. */
async function storyOf(runId: string) {
  const head = await runsDetailHead(t.db, [orgId], runId);
  if (!head) throw new Error(`no run ${runId}`);
  const [steps, timeline] = await Promise.all([stepsViewOfRun(t.db, orgId, runId), runEventsForRun(t.db, orgId, runId)]);
  return buildStory({ run: head, steps, timeline, timers: [], approvals: [], signals: [], graph: null, contact: null, viewerZone: "UTC" } as Parameters<typeof buildStory>[0]);
}

describe("two automations to one contact at the same instant, a cap of 1 a day", () => {
  it(`${races} races: exactly one email each, and the capped run says why (wait or skip)`, { timeout: 120_000 }, async () => {
    const graphs = workers.map(() => new GraphCache());
    const runners = workers.map((db, i) => new StepRunner({ db, graphs: graphs[i] as GraphCache, worker: `lane-io-${i}`, lane: { ...lanes.io, leaseMs: 10_000, heartbeatMs: 3_000 }, log }));
    const began = Date.now();
    let overlapped = 0;
    for (let race = 0; race < races; race++) {
      const mode = race % 2 === 0 ? "wait" : "skip";
      for (const a of ["news", "offers"]) await automationsSetCappedAction(t.db, orgId, ids[a] as string, mode);
      const address = `r${race}@race.test`;
      const pair = [await start("news", address, race), await start("offers", address, race)];
      // Which runner takes which step alternates, so neither automation is always first.
      const order = race % 4 < 2 ? pair : [...pair].reverse();
      await Promise.all(order.map((s, i) => (runners[i] as StepRunner).run(s.stepId)));

      expect(smtp.received.filter((m) => m.to.includes(address)), `race ${race}`).toHaveLength(1);
      const counted = await rows("SELECT run_id, sent_at, sent_at + interval '24 hours' AS until FROM contact_sends WHERE address = $1 AND released_at IS NULL", [address]);
      expect(counted).toHaveLength(1);
      const sent = pair.find((s) => s.runId === counted[0].run_id);
      const capped = pair.find((s) => s.runId !== counted[0].run_id);
      if (!sent || !capped) throw new Error(`race ${race}: the counted send is neither run's`);
      const words = new RegExp(`^frequency cap: at most 1 email per 24 hours to this address; one went out at \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC from "${sent.automation}"`);
      if (mode === "wait") {
        const [held] = await rows("SELECT data FROM run_events WHERE run_id = $1 AND type = 'step.deferred'", [capped.runId]);
        expect(held?.data.hold.rule).toBe("frequency_cap");
        expect(held?.data.hold.words).toMatch(words);
        expect(held?.data.hold.until).toBe((counted[0].until as Date).toISOString());
        const [step] = await rows("SELECT status FROM steps WHERE id = $1", [capped.stepId]);
        expect(step.status).toBe("ready");
      } else {
        const story = await storyOf(capped.runId);
        const line = story.sentences.find((s) => s.text.startsWith(`Email to ${address} not sent: `));
        expect(line?.text.slice(`Email to ${address} not sent: `.length)).toMatch(words);
        expect(line?.text).toMatch(/; this automation skips sends over the cap$/);
      }
      // Both claimed before either settled: the two sends really ran at once.
      const [times] = await rows(
        `SELECT max(at) FILTER (WHERE type = 'step.claimed') AS claimed, min(at) FILTER (WHERE type IN ('step.succeeded', 'step.skipped', 'step.deferred', 'step.failed')) AS settled
         FROM run_events WHERE run_id = ANY($1) AND step_id = ANY($2)`,
        [pair.map((s) => s.runId), pair.map((s) => s.stepId)],
      );
      if (times.claimed < times.settled) overlapped++;
    }
    const seconds = (Date.now() - began) / 1000;
    console.log(`frequency cap races: ${races} in ${seconds.toFixed(1)} s; both claimed before either settled in ${overlapped}`);
    expect(smtp.received).toHaveLength(races);
    expect(overlapped).toBeGreaterThan(races / 4);
  });
});
