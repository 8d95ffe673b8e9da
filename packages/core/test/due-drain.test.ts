import { type Db, inTx } from "@holdfast/db";
import { connectAs, } from "@holdfast/testkit";
import { describe, expect, it } from "vitest";
import { DueDrain } from "../src/run/engine/due-drain";
import { timersTakeFiringSlot } from "../src/store/sql/timers";
import { GraphCache } from "../src/versions/graph-cache";
import { countedTransactions, pauseBed } from "./timer-waits";

// The engine's answer to a timers.due job (run/engine/due-drain.ts): the due sweep's batches once the instant came.

const bed = pauseBed();
const rows = bed.rows;
/** A run waiting on its timer, due `dueInSeconds` from now (negative: already due). */
const waiting = async (dueInSeconds: number) => (await bed.waiting(dueInSeconds)).runId;
const counted = countedTransactions;

const dbText = async (sql: string) => (await rows(`SELECT to_jsonb(${sql}) #>> '{}' AS at`))[0].at as string;

describe("a timers.due job (DueDrain)", () => {
  it("before its instant by the database clock fires nothing and says in how long; once it came, fires every due timer, in batches, and walks their runs", async () => {
    const early = await Promise.all([waiting(30), waiting(30)]);
    const due = await Promise.all(Array.from({ length: 5 }, () => waiting(-1)));
    const { db, count } = counted(bed.t.db);
    const drain = new DueDrain({ db, graphs: new GraphCache(), actor: "engine-test", pick: { orgs: 20, perOrg: 2, total: 2 } });

    const answer = await drain.due(await dbText("now() + interval '30 seconds'"));
    expect(answer).toMatchObject({ kind: "not_due" });
    expect((answer as { inMs: number }).inMs).toBeGreaterThan(25_000);
    expect((answer as { inMs: number }).inMs).toBeLessThanOrEqual(30_000);
    expect(count.transactions).toBe(0);
    expect(await rows("SELECT count(*)::int AS n FROM timers WHERE fired_at IS NOT NULL")).toEqual([{ n: 0 }]);

    // Due: batches of two until one fires nothing (2, 2, 1, 0), each its own transaction, and then none is due.
    expect(await drain.due(await dbText("now() - interval '1 second'"))).toEqual({ kind: "done", fired: 5 });
    expect(count.transactions).toBe(4);
    expect(await rows("SELECT DISTINCT status FROM runs WHERE id = ANY($1)", [due])).toEqual([{ status: "completed" }]);
    expect(await rows("SELECT DISTINCT fired_by FROM timers WHERE run_id = ANY($1)", [due])).toEqual([{ fired_by: "engine-test" }]);
    expect(await rows("SELECT count(*)::int AS n FROM timers WHERE run_id = ANY($1) AND fired_at IS NULL", [early])).toEqual([{ n: 2 }]);
    await rows("UPDATE timers SET due_at = now() + interval '1 hour' WHERE fired_at IS NULL");
  });

  it("answers a job that comes while a pass runs at once, and the pass looks once more before it ends", async () => {
    const first = await Promise.all(Array.from({ length: 3 }, () => waiting(-1)));
    // The pass's second batch waits for `release`: the job below comes while the pass runs.
    const { db, count } = counted(bed.t.db);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const held = new Proxy(db, {
      get(target, key) {
        const value = Reflect.get(target, key, target);
        if (key !== "$transaction") return value;
        return async (...args: unknown[]) => {
          if (count.transactions === 1) await gate;
          return (value as (...a: unknown[]) => unknown)(...args);
        };
      },
    }) as Db;
    const drain = new DueDrain({ db: held, graphs: new GraphCache(), actor: "engine-test", pick: { orgs: 20, perOrg: 50, total: 500 } });
    const at = await dbText("now()");
    const starter = drain.due(at);
    while (count.transactions < 1) await new Promise((r) => setTimeout(r, 10));
    const late = await Promise.all(Array.from({ length: 2 }, () => waiting(-1)));
    expect(await drain.due(at)).toEqual({ kind: "joined" });
    release();
    expect(await starter).toEqual({ kind: "done", fired: 5 });
    // 3, then the 2 written meanwhile, then nothing, and nothing again: the look the joined job asked for.
    expect(count.transactions).toBe(4);
    expect(await rows("SELECT count(*)::int AS n FROM timers WHERE run_id = ANY($1) AND fired_at IS NOT NULL", [[...first, ...late]])).toEqual([{ n: 5 }]);
    // Nothing running now: the next job starts a pass of its own, which finds nothing due.
    expect(await drain.due(at)).toEqual({ kind: "done", fired: 0 });
  });

  it("takes only the engines' slot of the due sweep's two: while it is taken a pass fires nothing and gives up after maxPassMs; the sweeper's slot stays free", async () => {
    const due = await Promise.all(Array.from({ length: 2 }, () => waiting(-1)));
    const holder = await connectAs(bed.t.url, "holdfast_worker");
    await holder.query("BEGIN");
    await holder.query("SELECT pg_advisory_xact_lock(47, 1)");
    const drain = new DueDrain({ db: bed.t.db, graphs: new GraphCache(), actor: "engine-test", pick: { orgs: 20, perOrg: 50, total: 500 }, maxPassMs: 300, pauseMs: 50 });
    const at = await dbText("now()");
    expect(await drain.due(at)).toEqual({ kind: "done", fired: 0 });
    expect(await rows("SELECT count(*)::int AS n FROM timers WHERE run_id = ANY($1) AND fired_at IS NULL", [due])).toEqual([{ n: 2 }]);
    expect(await inTx(bed.t.db, (tx) => timersTakeFiringSlot(tx, "engine"))).toBe(false);
    expect(await inTx(bed.t.db, (tx) => timersTakeFiringSlot(tx, "sweeper"))).toBe(true);
    await holder.query("COMMIT");
    await holder.end();
    expect(await drain.due(at)).toEqual({ kind: "done", fired: 2 });
  });
});
