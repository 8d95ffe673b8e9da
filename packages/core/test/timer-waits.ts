import type { Db } from "@holdfast/db";
import { createTestDatabase, publish, type TestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll } from "vitest";
import type { TimerDue } from "../src/base/catalog";
import { advanceRun } from "../src/run/engine/advance";
import { startRun } from "../src/run/start/start-run";
import { GraphCache } from "../src/versions/graph-cache";
import { waitGraph } from "./sweeper/bed";

// Shared by the tests of timers fired in batches (fire-timers.test.ts, due-drain.test.ts).

let n = 0;

/**
 * A run of acme's "pause" automation (sweeper/bed.ts waitGraph: an hour's wait) waiting on its timer, moved to
 * `dueInSeconds` from now (negative: already due).
 */
export async function waitingRun(t: TestDatabase, orgId: string, dueInSeconds: number): Promise<TimerDue> {
  const body = { id: `evt_wait_${process.pid}_${++n}` };
  const headers = { "webhook-id": body.id, "webhook-timestamp": null, "webhook-signature": null };
  const { runId } = await startRun(t.db, { orgSlug: "acme", automationSlug: "pause", rawBody: "{}", body, headers, via: "test", auth: { kind: "operator" } });
  await advanceRun(t.db, new GraphCache(), { orgId, runId, reason: "started" });
  const { rows } = await t.sql.query("UPDATE timers SET due_at = now() + make_interval(secs => $2) WHERE run_id = $1 RETURNING id, wake", [runId, dueInSeconds]);
  return { orgId, runId, timerId: rows[0].id, wake: rows[0].wake, dueAt: "" };
}

/** The database's transactions, counted where they are opened. */
export function countedTransactions(db: Db) {
  const count = { transactions: 0 };
  const proxy = new Proxy(db, {
    get(target, key) {
      const value = Reflect.get(target, key, target);
      if (key === "$transaction") return (...args: unknown[]) => (count.transactions++, (value as (...a: unknown[]) => unknown).apply(target, args));
      return typeof value === "function" ? value.bind(target) : value;
    },
  }) as Db;
  return { db: proxy, count };
}

/**
 * A test database with acme's "pause" automation (an hour's wait), made before the file's tests and dropped after:
 * `waiting(s)` starts a run waiting on its timer, due s seconds from now.
 */
export function pauseBed() {
  let t: TestDatabase | undefined;
  let orgId = "";
  beforeAll(async () => {
    t = await createTestDatabase();
    ({ orgId } = await publish(t.db, waitGraph(), { automation: "pause" }));
  });
  afterAll(() => t?.drop());
  const bed = {
    get t(): TestDatabase {
      if (!t) throw new Error("the bed's database is made in beforeAll");
      return t;
    },
    rows: async (q: string, p: unknown[] = []) => (await bed.t.sql.query(q, p)).rows,
    waiting: (dueInSeconds: number) => waitingRun(bed.t, orgId, dueInSeconds),
  };
  return bed;
}
