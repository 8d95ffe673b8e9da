import { createTestDatabase, publish, type TestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { advanceRun } from "../src/run/engine/advance";
import { requestCancel } from "../src/run/runs/cancel";
import { startRun } from "../src/run/start/start-run";
import { fireTimer, recomputeTimers, timerWalkBackstopMs } from "../src/run/timers/fire";
import { parseGraph } from "../src/versions/graph";
import { GraphCache } from "../src/versions/graph-cache";

let t: TestDatabase;
const graphs = new GraphCache();
const rows = async (q: string, p: unknown[] = []) => (await t.sql.query(q, p)).rows;

beforeAll(async () => {
  t = await createTestDatabase();
  await publish(
    t.db,
    parseGraph({
      nodes: [
        { id: "signup", kind: "trigger", config: { eventIdField: "id" } },
        {
          id: "monday",
          kind: "wait",
          config: { rule: { kind: "next_weekday", at: "09:00" }, zoneFrom: "input.contact.tz", zone: "Europe/Berlin", spreadSeconds: 600 },
        },
        { id: "done", kind: "end" },
      ],
      edges: [
        { from: "signup", to: "monday" },
        { from: "monday", to: "done" },
      ],
    }),
    { automation: "monday" },
  );
});
afterAll(() => t?.drop());

async function waitingRun(id: string, tz: string) {
  const { runId } = await startRun(t.db, {
    orgSlug: "acme",
    automationSlug: "monday",
    rawBody: "{}",
    body: { id, contact: { tz } },
    headers: { "webhook-id": null, "webhook-timestamp": null, "webhook-signature": null },
    via: "test",
    auth: { kind: "operator" },
  });
  const [{ org_id: orgId }] = await rows("SELECT org_id FROM runs WHERE id = $1", [runId]);
  await advanceRun(t.db, graphs, { orgId, runId, reason: "started" });
  return { runId, orgId: orgId as string };
}

describe("timers on a run", () => {
  it("keep the intent and the instant, in the contact's zone, with the run's own spread", async () => {
    const { runId } = await waitingRun("a", "Asia/Tokyo");
    const [timer] = await rows("SELECT zone, rule, spread_offset_seconds, due_at, wake FROM timers WHERE run_id = $1", [runId]);
    expect(timer).toMatchObject({ zone: "Asia/Tokyo", rule: { kind: "next_weekday", at: "09:00" }, wake: 1 });
    const local = new Intl.DateTimeFormat("en-GB", { timeZone: "Asia/Tokyo", weekday: "short", hour: "2-digit", minute: "2-digit" }).format(
      new Date(timer.due_at.getTime() - timer.spread_offset_seconds * 1000),
    );
    expect(local).toMatch(/^(Mon|Tue|Wed|Thu|Fri) 09:00$/);
    expect(await rows("SELECT status FROM steps WHERE run_id = $1", [runId])).toEqual([{ status: "waiting" }]);
    const [event] = await rows("SELECT data FROM run_events WHERE run_id = $1 AND type = 'timer.scheduled'", [runId]);
    expect(event.data).toMatchObject({ zone: "Asia/Tokyo", zoneSource: "run" });
  });

  it("an invalid zone on the run falls back to the node's zone", async () => {
    const { runId } = await waitingRun("b", "Mars/Olympus");
    expect(await rows("SELECT zone FROM timers WHERE run_id = $1", [runId])).toEqual([{ zone: "Europe/Berlin" }]);
  });

  it("recompute moves a timer when the contact's zone changes, records both instants, and retires the old wake-up", async () => {
    const { runId, orgId } = await waitingRun("c", "Europe/Berlin");
    const [before] = await rows("SELECT id, due_at, wake, spread_offset_seconds FROM timers WHERE run_id = $1", [runId]);
    expect(await recomputeTimers(t.db, { orgId, runId }, "America/New_York")).toEqual({ checked: 1, moved: 1 });
    const [after] = await rows("SELECT due_at, wake, zone, spread_offset_seconds FROM timers WHERE run_id = $1", [runId]);
    expect(after.zone).toBe("America/New_York");
    expect(after.wake).toBe(2);
    // 09:00 on the next weekday in New York (which day depends on the hour the test runs, so read the wall time).
    const wall = (d: Date, zone: string) => new Intl.DateTimeFormat("en-GB", { timeZone: zone, weekday: "short", hour: "2-digit", minute: "2-digit" }).format(d);
    const unspread = (r: { due_at: Date; spread_offset_seconds: number }) => new Date(r.due_at.getTime() - r.spread_offset_seconds * 1000);
    expect(wall(unspread(after), "America/New_York")).toMatch(/^(Mon|Tue|Wed|Thu|Fri) 09:00$/);
    expect(wall(unspread(before), "Europe/Berlin")).toMatch(/^(Mon|Tue|Wed|Thu|Fri) 09:00$/);
    expect(after.due_at.getTime()).not.toBe(before.due_at.getTime());
    const [event] = await rows("SELECT data FROM run_events WHERE run_id = $1 AND type = 'timer.recomputed'", [runId]);
    expect(event.data).toMatchObject({ oldZone: "Europe/Berlin", zone: "America/New_York", wake: 2 });
    expect(new Date(event.data.oldDueAt).getTime()).toBe(before.due_at.getTime());
    // Nothing changed in the tz rules: a global recompute moves nothing.
    expect((await recomputeTimers(t.db, {})).moved).toBe(0);
    // The first wake-up's job is stale now, even once due.
    await t.sql.query("UPDATE timers SET due_at = now() - interval '1 second' WHERE run_id = $1", [runId]);
    expect(await fireTimer(t.db, { orgId, runId, timerId: before.id, wake: 1, dueAt: "" }, "test")).toEqual({ kind: "stale" });
    expect(await fireTimer(t.db, { orgId, runId, timerId: before.id, wake: 2, dueAt: "" }, "test")).toEqual({ kind: "fired", runId });
    expect(await fireTimer(t.db, { orgId, runId, timerId: before.id, wake: 2, dueAt: "" }, "test")).toEqual({ kind: "stale" });
    expect(await advanceRun(t.db, graphs, { orgId, runId, reason: "timer_fired" })).toMatchObject({ status: "completed" });
  });

  it("a changed rule recomputes from the same anchor and records the old rule and instant", async () => {
    const { runId, orgId } = await waitingRun("e", "Europe/Berlin");
    const [before] = await rows("SELECT due_at, anchor_at, spread_offset_seconds FROM timers WHERE run_id = $1", [runId]);
    const report = await recomputeTimers(t.db, { orgId, runId }, undefined, { kind: "duration", seconds: 3600 });
    expect(report).toEqual({ checked: 1, moved: 1 });
    const [after] = await rows("SELECT due_at, rule, wake FROM timers WHERE run_id = $1", [runId]);
    expect(after.rule).toEqual({ kind: "duration", seconds: 3600 });
    expect(after.due_at.getTime()).toBe(before.anchor_at.getTime() + 3600_000 + before.spread_offset_seconds * 1000);
    const [event] = await rows("SELECT data FROM run_events WHERE run_id = $1 AND type = 'timer.recomputed'", [runId]);
    expect(event.data).toMatchObject({ reason: "rule changed", oldRule: { kind: "next_weekday", at: "09:00" }, rule: { kind: "duration", seconds: 3600 } });
  });

  it("the fast path's run.wake is a backstop: due later, withdrawn by the walk that follows the firing", async () => {
    const { runId, orgId } = await waitingRun("e", "Europe/Berlin");
    const [timer] = await rows("SELECT id, wake FROM timers WHERE run_id = $1", [runId]);
    await t.sql.query("UPDATE timers SET due_at = now() - interval '1 second' WHERE run_id = $1", [runId]);
    expect(await fireTimer(t.db, { orgId, runId, timerId: timer.id, wake: timer.wake, dueAt: "" }, "engine", timerWalkBackstopMs)).toEqual({ kind: "fired", runId });
    const wakes = () => rows("SELECT sent_at IS NOT NULL AS sent, round(EXTRACT(EPOCH FROM available_at - created_at))::int AS after FROM outbox WHERE run_id = $1 AND topic = 'run.wake'", [runId]);
    // Not due for the relay yet (a crash here leaves it to bring the engine in ten seconds).
    expect(await wakes()).toEqual([{ sent: false, after: timerWalkBackstopMs / 1000 }]);
    expect(await advanceRun(t.db, graphs, { orgId, runId, reason: "timer_fired" })).toMatchObject({ status: "completed" });
    expect(await wakes()).toEqual([{ sent: true, after: timerWalkBackstopMs / 1000 }]);
  });

  it("a timer that is not due yet does not fire; cancelling the waiting run closes its timer", async () => {
    const { runId, orgId } = await waitingRun("d", "Europe/Berlin");
    const [timer] = await rows("SELECT id FROM timers WHERE run_id = $1", [runId]);
    expect((await fireTimer(t.db, { orgId, runId, timerId: timer.id, wake: 1, dueAt: "" }, "test")).kind).toBe("not_due");
    expect(await requestCancel(t.db, graphs, orgId, runId, "unsubscribed", "test")).toMatchObject({ state: "cancelled" });
    expect(await rows("SELECT fired_by FROM timers WHERE run_id = $1", [runId])).toEqual([{ fired_by: "cancelled" }]);
  });
});
