import { Writable } from "node:stream";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db, Tx } from "@holdfast/db";
import { runSweeper } from "../../src/run/sweeper/runner";
import type { SweepContext, SweepService } from "../../src/run/sweeper/service";
import { sweepServiceDefinitions } from "../../src/run/sweeper/services";
import { type Bed, sweeperBed } from "./bed";

let bed: Bed;
beforeAll(async () => {
  bed = await sweeperBed();
});
afterAll(() => bed?.drop());

/** A stand-in service that records its runs; `fullFor` results say the batch was full. */
function fake(name: string, intervalMs: number, o: { fails?: boolean; fullFor?: number; soonFor?: number; loop?: string; takesMs?: number } = {}) {
  const runs: number[] = [];
  const service: SweepService<{ n: number }> = {
    name,
    intervalMs,
    ...(o.loop ? { loop: o.loop } : {}),
    async runOnce() {
      runs.push(performance.now());
      if (o.takesMs) await new Promise((r) => setTimeout(r, o.takesMs));
      if (o.fails) throw new Error(`${name} broke`);
      return { n: runs.length };
    },
    full: (r) => r.n <= (o.fullFor ?? 0),
    // `soonFor` results ask to run again in 150 ms (found work, more coming), the rest wait the interval.
    nextInMs: (r) => (r.n <= (o.soonFor ?? 0) ? 150 : undefined),
    report: () => {},
  };
  return { service, runs };
}

function logged() {
  const lines: { msg: string; service?: string; level: number }[] = [];
  const log = pino({ level: "info" }, new Writable({ write: (chunk, _e, done) => (lines.push(JSON.parse(String(chunk))), done()) }));
  return { log, lines };
}

const leader = async () => (await bed.rows("SELECT owner FROM leader_leases WHERE name = 'sweeper' AND lease_until > now()"))[0]?.owner;

describe("the sweeper's loop", () => {
  it("runs each service at its own interval under the leader lease; a failing one is logged and the others go on; the lease is released at the end", async () => {
    const often = fake("often", 50);
    const broken = fake("broken", 50, { fails: true });
    const rare = fake("rare", 60_000);
    const busy = fake("busy", 60_000, { fullFor: 3 });
    const soon = fake("soon", 60_000, { soonFor: 3 });
    const { log, lines } = logged();
    const stop = new AbortController();
    const running = runSweeper({ ctx: bed.ctx, services: [broken.service, often.service, rare.service, busy.service, soon.service], owner: "sweeper-a", leaseMs: 3_000, log, signal: stop.signal });

    for (let i = 0; i < 100 && (await leader()) !== "sweeper-a"; i++) await new Promise((r) => setTimeout(r, 20));
    // A standby with the same services never runs them while the leader holds the lease.
    const standbyRuns = fake("often", 50);
    const standbyStop = new AbortController();
    const standby = runSweeper({ ctx: bed.ctx, services: [standbyRuns.service], owner: "sweeper-b", leaseMs: 3_000, log: logged().log, signal: standbyStop.signal });

    await new Promise((r) => setTimeout(r, 1_000));
    expect(await leader()).toBe("sweeper-a");
    stop.abort();
    standbyStop.abort();
    await Promise.all([running, standby]);

    expect(often.runs.length).toBeGreaterThanOrEqual(5); // every ~50 ms for a second, despite the broken one
    expect(broken.runs.length).toBeGreaterThanOrEqual(5);
    expect(rare.runs).toHaveLength(1); // once on taking the lead, then not before a minute
    expect(busy.runs).toHaveLength(4); // three full batches ran again at once, the fourth waits its interval
    expect((busy.runs[3] ?? 0) - (busy.runs[0] ?? 0)).toBeLessThan(900);
    // Three runs that asked to look again soon ran 150 ms apart (not at the minute's interval), the fourth waits it.
    expect(soon.runs).toHaveLength(4);
    for (let i = 1; i < 4; i++) expect((soon.runs[i] ?? 0) - (soon.runs[i - 1] ?? 0)).toBeGreaterThanOrEqual(140);
    expect(standbyRuns.runs).toHaveLength(0);
    const failures = lines.filter((l) => l.service === "broken");
    expect(failures.length).toBe(broken.runs.length);
    expect(failures[0]?.msg).toBe("sweep service broken failed; the others go on");
    expect(lines.filter((l) => l.msg === "became sweeper leader")).toHaveLength(1);
    expect(await leader()).toBeUndefined(); // released on the way out: a standby takes over at once
  });

  it("runs a service of its own loop beside the maintenance loop: a slow scan never holds it back", async () => {
    // A maintenance pass that takes 400 ms (a scan over many waiting runs) and a due sweep every 50 ms in its own loop.
    const slow = fake("slow-scan", 50, { takesMs: 400 });
    const due = fake("due", 50, { loop: "timers" });
    const stop = new AbortController();
    const running = runSweeper({ ctx: bed.ctx, services: [slow.service, due.service], owner: "sweeper-c", leaseMs: 3_000, log: logged().log, signal: stop.signal });
    for (let i = 0; i < 100 && (await leader()) !== "sweeper-c"; i++) await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setTimeout(r, 1_200));
    stop.abort();
    await running;
    // In one loop the due sweep ran only between scans (about every 450 ms: 3 or 4 times); in its own, every ~50 ms.
    expect(slow.runs.length).toBeLessThanOrEqual(4);
    expect(due.runs.length).toBeGreaterThanOrEqual(10);
    const gaps = due.runs.slice(1).map((t, i) => t - (due.runs[i] ?? t));
    expect(Math.max(...gaps)).toBeLessThan(300);
  });

  it("paces a service whose look is slow: it waits 50 times the look's time before the next (a scan that grows with the waiting runs), unless its batch was full", async () => {
    const lookService = (name: string, lookMs: number, fullFor = 0) => {
      const looks: number[] = [];
      const service: SweepService<number> = {
        name,
        intervalMs: 50,
        split: {
          look: async () => (looks.push(performance.now()), lookMs > 0 && (await new Promise((r) => setTimeout(r, lookMs))), looks.length),
          act: async (_ctx, n) => n as number,
        },
        runOnce: async () => 0,
        full: (n) => n <= fullFor,
        report: () => {},
      };
      return { service, looks };
    };
    // A 30 ms look: next after 1.5 s, not 50 ms. A look that returns at once: its 50 ms interval (on a loaded machine
    // even that takes a few ms, paced to a few hundred). A slow look whose first three batches were full: again at
    // once, three times, then paced.
    const slow = lookService("slow-look", 30);
    const quick = lookService("quick-look", 0);
    const busy = lookService("busy-look", 30, 3);
    const stop = new AbortController();
    const running = runSweeper({ ctx: bed.ctx, services: [slow.service, quick.service, busy.service], owner: "sweeper-p", leaseMs: 3_000, log: logged().log, signal: stop.signal });
    for (let i = 0; i < 100 && (await leader()) !== "sweeper-p"; i++) await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setTimeout(r, 1_000));
    stop.abort();
    await running;
    expect(slow.looks).toHaveLength(1);
    expect(busy.looks).toHaveLength(4);
    // The quick one ran again and again between them (8 or more on a quiet machine; in the fresh-clone CI, beside a
    // spike bench, 4: its own look took longer there).
    expect(quick.looks.length).toBeGreaterThanOrEqual(3);
  });

  it("runs the looks of every due service in one transaction, each act after it commits; a look that throws is its service's failure alone", async () => {
    // Every maintenance service with its defaults, on a database with nothing to repair, counted by transaction.
    let transactions = 0;
    const counted = new Proxy(bed.ctx.db, {
      get(target, key) {
        const value = Reflect.get(target, key, target);
        if (key === "$transaction") return (...args: unknown[]) => (transactions++, (value as (...a: unknown[]) => unknown).apply(target, args));
        return typeof value === "function" ? value.bind(target) : value;
      },
    }) as Db;
    const ctx: SweepContext = { ...bed.ctx, db: counted };
    const maintenance = sweepServiceDefinitions.filter((d) => d.name !== "due-timers").map((d) => d.make({ intervalMs: 60_000 }) as SweepService);
    expect(maintenance.filter((s) => !s.split).map((s) => s.name)).toEqual([]);
    // A look that throws, one that writes (its act then reads the row from another connection: the look committed),
    // both among the real ones.
    const acted: unknown[] = [];
    const broken: SweepService<number> = {
      name: "broken-look",
      intervalMs: 60_000,
      split: { look: async () => Promise.reject(new Error("look broke")), act: async () => 0 },
      runOnce: async () => 0,
      full: () => false,
      report: () => {},
    };
    const writes: SweepService<number> = {
      name: "writes-look",
      intervalMs: 60_000,
      split: {
        look: async (tx: Tx) => tx.$executeRaw`INSERT INTO leader_leases (name, owner, lease_until) VALUES ('look-probe', 'test', now())`,
        act: async (_ctx, looked) => (acted.push(looked, (await bed.rows("SELECT owner FROM leader_leases WHERE name = 'look-probe'"))[0]?.owner), 1),
      },
      runOnce: async () => 0,
      full: () => false,
      report: () => {},
    };

    const run = async (services: SweepService[], owner: string) => {
      const { log, lines } = logged();
      const stop = new AbortController();
      const before = transactions;
      const running = runSweeper({ ctx, services, owner, leaseMs: 3_000, log, signal: stop.signal });
      for (let i = 0; i < 100 && (await leader()) !== owner; i++) await new Promise((r) => setTimeout(r, 20));
      await new Promise((r) => setTimeout(r, 400));
      stop.abort();
      await running;
      return { transactions: transactions - before, lines };
    };
    // The lease's own transactions (take, renew, release), measured with no service at all.
    const lease = (await run([], "sweeper-0")).transactions;

    // Fourteen services due at once: one transaction for all their looks (there was one each).
    const idle = await run(maintenance, "sweeper-d");
    expect(idle.transactions - lease).toBe(1);
    expect(idle.lines.filter((l) => l.level >= 50)).toEqual([]);

    const mixed = await run([...maintenance.slice(0, 3), broken, writes, ...maintenance.slice(3)], "sweeper-e");
    // The shared transaction rolled back at the broken look; each look then ran alone (one transaction each).
    expect(mixed.transactions - lease).toBe(1 + maintenance.length + 2);
    expect(mixed.lines.filter((l) => l.service === "broken-look").map((l) => l.msg)).toEqual(["sweep service broken-look failed; the others go on"]);
    expect(mixed.lines.filter((l) => l.level >= 50 && l.service !== "broken-look")).toEqual([]);
    expect(acted).toEqual([1, "test"]);
    await bed.rows("DELETE FROM leader_leases WHERE name = 'look-probe'");
  });
});
