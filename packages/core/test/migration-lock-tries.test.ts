import { readFileSync } from "node:fs";
import { join } from "node:path";
import { connectAs, createTestDatabase, repoRoot, type TestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * 20261212100000_steps_one_key takes `steps`, `approvals`, `signals` and `timers` exclusively in tries whose wait
 * grows from 50 ms (the block below, run as the migration runs it: inside a transaction). CI's upgrade soak once
 * failed it on a machine so loaded that no 50 ms passed without an engine transaction open on one of the four. Here
 * two sessions keep `timers` busy the way that looked: transactions of 250 ms, staggered, so one is always open and
 * always has 100 ms or more left. A 50 ms try never gets in; the growing tries do. A session that never lets go
 * makes it fail, naming that session.
 */
const migration = readFileSync(join(repoRoot, "prisma/migrations/20261212100000_steps_one_key/migration.sql"), "utf8");
const lockBlock = (() => {
  const start = migration.indexOf("DO $$");
  const end = migration.indexOf("END $$;", start) + "END $$;".length;
  return migration.slice(start, end);
})();

let t: TestDatabase;

beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t?.drop();
});

type Session = Awaited<ReturnType<typeof connectAs>>;

/** A session as the superuser (the migration's role), named as an operator would see it in pg_stat_activity. */
async function session(applicationName: string): Promise<Session> {
  const c = await connectAs(t.adminUrl, "postgres");
  await c.query("SELECT set_config('application_name', $1, false)", [applicationName]);
  return c;
}

/** Runs the migration's lock block in a transaction (as migrate does), then gives the locks back. */
async function takeLocks(block: string): Promise<{ ms: number; error?: string }> {
  const c = await session("holdfast-migrate-test");
  const started = Date.now();
  try {
    await c.query("BEGIN");
    await c.query(block);
    const { rows } = await c.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM pg_locks WHERE pid = pg_backend_pid() AND mode = 'AccessExclusiveLock' AND relation IN ('steps'::regclass, 'approvals'::regclass, 'signals'::regclass, 'timers'::regclass)",
    );
    expect(rows[0]?.n).toBe(4);
    return { ms: Date.now() - started };
  } catch (error) {
    return { ms: Date.now() - started, error: (error as Error).message };
  } finally {
    await c.query("ROLLBACK").catch(() => {});
    await c.end();
  }
}

describe("the steps_one_key migration's lock tries", () => {
  it("get the four locks while two sessions keep timers busy with overlapping 250 ms transactions", async () => {
    let busy = true;
    const holders = await Promise.all([session("busy-1"), session("busy-2")]);
    let transactions = 0;
    // Each session opens a transaction every 300 ms on a fixed schedule (no drift), holds timers for 250 ms of it, and
    // the second runs 150 ms after the first: one is always open with 100 ms or more left.
    const t0 = Date.now();
    const keepBusy = async (c: Session, offsetMs: number) => {
      for (let k = 0; busy; k++) {
        await new Promise((r) => setTimeout(r, Math.max(0, t0 + offsetMs + k * 300 - Date.now())));
        await c.query("BEGIN");
        await c.query("LOCK TABLE timers IN ROW EXCLUSIVE MODE");
        await c.query("SELECT pg_sleep(0.25)");
        await c.query("COMMIT");
        transactions++;
      }
    };
    const loops = [keepBusy(holders[0] as Session, 0), keepBusy(holders[1] as Session, 150)];
    await new Promise((r) => setTimeout(r, 400));
    // A single 50 ms try (the block's first) does not get in: one of the two is always open with time left.
    const fifty = await takeLocks("SET LOCAL lock_timeout = '50ms'; LOCK TABLE steps, approvals, signals, timers IN ACCESS EXCLUSIVE MODE;");
    expect(fifty.error).toMatch(/lock timeout/);
    const result = await takeLocks(lockBlock);
    busy = false;
    await Promise.all(loops);
    await Promise.all(holders.map((c) => c.end()));
    expect(result.error).toBeUndefined();
    expect(transactions).toBeGreaterThan(4);
  });

  it("fail after their time, naming the session that held a lock", async () => {
    const holder = await session("holdfast-lane-worker-stuck");
    await holder.query("BEGIN");
    await holder.query("LOCK TABLE signals IN ROW EXCLUSIVE MODE");
    // The block's 120 s made 2 s, so the test does not wait two minutes; the rest of the block is the migration's own.
    const short = lockBlock.replace("interval '120 seconds'", "interval '2 seconds'");
    expect(short).not.toBe(lockBlock);
    const result = await takeLocks(short);
    await holder.query("ROLLBACK");
    await holder.end();
    expect(result.error).toMatch(/stayed busy/);
    expect(result.error).toMatch(/holdfast-lane-worker-stuck \(pid \d+, idle in transaction, its transaction open [\d.]+ s\)/);
    expect(result.error).toMatch(/run holdfast migrate again at a quieter moment/);
  });
});
