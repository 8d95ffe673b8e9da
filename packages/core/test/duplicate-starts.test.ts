import { createTestDatabase, httpChainGraph, publish, type TestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type StartRequest, startRun } from "../src/run/start/start-run";
import { parseGraph } from "../src/versions/graph";

let t: TestDatabase;

beforeAll(async () => {
  t = await createTestDatabase();
  // The start's one-statement path (holdfast_run_start): the first walk needs nothing from the engine.
  await publish(t.db, httpChainGraph("https://example.com/hook", 1), { automation: "inline" });
  // The engine's transactional path: a first walk that plans a timer.
  await publish(
    t.db,
    parseGraph({
      nodes: [
        { id: "t", kind: "trigger", config: { eventIdField: "id" } },
        { id: "pause", kind: "wait", config: { rule: { kind: "duration", seconds: 3600 } } },
        { id: "e", kind: "end" },
      ],
      edges: [
        { from: "t", to: "pause" },
        { from: "pause", to: "e" },
      ],
    }),
    { automation: "timer" },
  );
});
afterAll(async () => {
  await t?.drop();
});

const rows = async (q: string, p: unknown[] = []) => (await t.sql.query(q, p)).rows;

function deliver(automation: string, id: string, extra: Partial<StartRequest> = {}) {
  return startRun(t.db, {
    orgSlug: "acme",
    automationSlug: automation,
    rawBody: "{}",
    body: { id },
    headers: { "webhook-id": id, "webhook-timestamp": null, "webhook-signature": null },
    via: "test",
    auth: { kind: "operator" },
    ...extra,
  });
}

/** Repeats of a delivery (after the first), `concurrency` at a time. */
async function repeat(times: number, concurrency: number, once: () => Promise<{ duplicate: boolean }>) {
  let duplicates = 0;
  for (let done = 0; done < times; done += concurrency) {
    const batch = await Promise.all(Array.from({ length: Math.min(concurrency, times - done) }, once));
    duplicates += batch.filter((s) => s.duplicate).length;
  }
  return duplicates;
}

async function duplicatesOf(runId: string) {
  const [{ n: timeline }] = await rows("SELECT count(*)::int AS n FROM run_events WHERE run_id = $1 AND type = 'run.duplicate_start'", [runId]);
  // The timeline stays bounded whatever else is asserted (checked first: it is the defect).
  expect(timeline).toBeLessThanOrEqual(3);
  const [run] = await rows(
    `SELECT duplicate_deliveries AS n, last_duplicate_at IS NOT NULL AND last_duplicate_at >= created_at AS "lastSet"
     FROM runs WHERE id = $1`,
    [runId],
  );
  return { counted: run.n as number, lastSet: run.lastSet as boolean, timeline: timeline as number };
}

describe("a delivery repeated 1,000 times", () => {
  it("starts one run, counts 999 duplicates on it, and keeps at most 3 timeline rows (one-statement start)", async () => {
    const first = await deliver("inline", "evt_flood");
    expect(first.duplicate).toBe(false);
    expect(await repeat(999, 20, () => deliver("inline", "evt_flood"))).toBe(999);
    expect(await rows("SELECT count(*)::int AS n FROM runs WHERE start_key LIKE '%evt_flood'")).toEqual([{ n: 1 }]);
    const d = await duplicatesOf(first.runId);
    console.log(`1,000 deliveries of one id: ${d.counted} duplicates counted, ${d.timeline} run.duplicate_start rows`);
    expect(d).toEqual({ counted: 999, lastSet: true, timeline: 3 });
    // The rows kept are the first repeats, numbered; the last says later repeats are only counted.
    const kept = await rows("SELECT data FROM run_events WHERE run_id = $1 AND type = 'run.duplicate_start' ORDER BY id", [first.runId]);
    expect(kept.map((r) => r.data.duplicate)).toEqual([1, 2, 3]);
    expect(kept[2].data.more).toMatch(/counted on the run/);
  });

  it("counts the same way on the delivery path (with its delivery rows) and on the engine's path", async () => {
    const viaUrl = await deliver("inline", "evt_url", { delivery: { contentType: "application/json", bodyBytes: 2 } });
    await repeat(50, 10, () => deliver("inline", "evt_url", { delivery: { contentType: "application/json", bodyBytes: 2 } }));
    expect(await duplicatesOf(viaUrl.runId)).toEqual({ counted: 50, lastSet: true, timeline: 3 });

    const timer = await deliver("timer", "evt_timer");
    expect(await rows("SELECT count(*)::int AS n FROM timers WHERE run_id = $1", [timer.runId])).toEqual([{ n: 1 }]);
    await repeat(50, 10, () => deliver("timer", "evt_timer"));
    expect(await duplicatesOf(timer.runId)).toEqual({ counted: 50, lastSet: true, timeline: 3 });
  });

  it("a repeat moves nothing else: the run's progress marks and timers are as they were", async () => {
    const first = await deliver("timer", "evt_quiet");
    const before = await rows("SELECT seq, updated_at, swept_at FROM runs WHERE id = $1", [first.runId]);
    await deliver("timer", "evt_quiet");
    expect(await rows("SELECT seq, updated_at, swept_at FROM runs WHERE id = $1", [first.runId])).toEqual(before);
    expect(await rows("SELECT count(*)::int AS n FROM timers WHERE run_id = $1", [first.runId])).toEqual([{ n: 1 }]);
  });
});
