import type { Member } from "../fleet";
import { sleep } from "../infra/exec";
import type { Fault, FaultKind } from "./schedule";

export interface Outages {
  restartPostgres(downMs: number): Promise<void>;
  restartRedis(downMs: number): Promise<void>;
  /** The cluster soak's outages (infra/cluster.ts); absent in the single-node soak. */
  cluster?: ClusterOutages;
}

/** What one failover cost, as the cluster's own handle measured it (kill to writes accepted / cluster_state:ok). */
export interface Failover {
  service: "postgres" | "redis";
  /** The node killed (Patroni member name, or the Redis port). */
  node: string;
  failoverMs: number;
}

export interface ClusterOutages {
  /** SIGKILL the PostgreSQL leader; resolves once the standby took over and HAProxy sends writes to it. */
  failPostgres(): Promise<Failover>;
  /** SIGKILL a Redis master; resolves once its replica took over and the cluster is ok again. */
  failRedis(): Promise<Failover>;
  /** Start the killed node again (it rejoins as standby or replica): the next kill then has somewhere to fail over to. */
  recover(f: Failover): Promise<void>;
  /** The process whose network path to the database can be cut (a label of the fleet), and the cut itself. */
  cutTarget: { label: string; kind: string };
  cut(): Promise<void>;
  restore(): Promise<void>;
}

export interface Injected {
  kind: FaultKind;
  /** The process (its label) and its kind; null for PostgreSQL and Redis. */
  target: string | null;
  targetKind: string | null;
  /** Milliseconds after the load began: when it was done, and when it was over (continued, service back). */
  atMs: number;
  endMs: number;
  durationMs: number;
  /** A failover's node and the cluster's own measure; writableAtMs: when it reported the service back (after t0). */
  failover?: Failover & { writableAtMs: number };
}

export interface Injection {
  /** Resolves when every fault has been done and is over (every frozen process continued, every service back). */
  done: Promise<Injected[]>;
  /** Continue every frozen process now (the soak is ending early). */
  abort(): void;
}

/**
 * Carries out the schedule against the fleet and the services, at its offsets from `t0`. A process fault goes to
 * the chosen member of its kind; one that is frozen already is skipped for the next of its kind, and when all of
 * them are frozen the fault waits until one continues (a fault is never lost, only late).
 */
export function injectFaults(schedule: Fault[], fleet: Member[], outages: Outages, t0: number, log: (line: string) => void): Injection {
  const injected: Injected[] = [];
  let aborted = false;
  const pending: Promise<void>[] = [];
  const since = () => Date.now() - t0;
  // Outages one at a time (a restart, a kill until the failover is over, a cut), so each one's unavailability is its
  // own; a killed node's return only holds up the next kill of the same service (it needs the node back as standby).
  const turns = new Map<string, Promise<unknown>>();
  const inTurn = <T>(key: "outage" | "postgres" | "redis", run: () => Promise<T>): Promise<T> => {
    const mine = (turns.get(key) ?? Promise.resolve()).then(run);
    turns.set(key, mine.catch(() => undefined));
    return mine;
  };
  const oneOutageAtATime = (run: () => Promise<void>) => inTurn("outage", run);

  const target = async (f: Fault): Promise<Member | null> => {
    const members = fleet.filter((m) => m.kind === f.target);
    for (;;) {
      if (aborted) return null;
      for (let i = 0; i < members.length; i++) {
        const m = members[((f.pick ?? 0) + i) % members.length] as Member;
        if (!m.frozen) return m;
      }
      await sleep(100);
    }
  };

  const apply = async (f: Fault): Promise<void> => {
    const at = since();
    switch (f.kind) {
      case "sigkill": {
        const m = await target(f);
        if (!m) return;
        m.proc.signal("SIGKILL");
        injected.push({ kind: f.kind, target: m.label, targetKind: m.kind, atMs: at, endMs: since(), durationMs: 0 });
        log(`fault ${at} ms: SIGKILL ${m.label}`);
        return;
      }
      case "sigstop": {
        const m = await target(f);
        if (!m) return;
        m.frozen = true;
        m.proc.signal("SIGSTOP");
        log(`fault ${at} ms: SIGSTOP ${m.label} for ${f.durationMs} ms`);
        const until = Date.now() + f.durationMs;
        while (!aborted && Date.now() < until) await sleep(Math.min(100, until - Date.now()));
        m.proc.signal("SIGCONT");
        m.frozen = false;
        injected.push({ kind: f.kind, target: m.label, targetKind: m.kind, atMs: at, endMs: since(), durationMs: f.durationMs });
        return;
      }
      case "pg_restart":
      case "redis_restart":
        return oneOutageAtATime(async () => {
          const start = since();
          log(`fault ${start} ms: ${f.kind === "pg_restart" ? "PostgreSQL" : "Redis"} down for ${f.durationMs} ms`);
          await (f.kind === "pg_restart" ? outages.restartPostgres(f.durationMs) : outages.restartRedis(f.durationMs));
          injected.push({ kind: f.kind, target: null, targetKind: null, atMs: start, endMs: since(), durationMs: f.durationMs });
          log(`fault ${since()} ms: ${f.kind === "pg_restart" ? "PostgreSQL" : "Redis"} is back`);
        });
      case "pg_failover":
      case "redis_failover":
        return failover(f.kind);
      case "db_cut":
        return oneOutageAtATime(() => (aborted ? Promise.resolve() : cut(f.durationMs)));
    }
  };

  const cluster = (): ClusterOutages => {
    if (!outages.cluster) throw new Error("a failover or a cut was scheduled, but this soak runs no cluster (pnpm soak --cluster)");
    return outages.cluster;
  };

  const failover = (kind: "pg_failover" | "redis_failover"): Promise<void> =>
    inTurn(kind === "pg_failover" ? "postgres" : "redis", async () => {
      const c = cluster();
      const name = kind === "pg_failover" ? "PostgreSQL leader" : "Redis master";
      const killed = await inTurn("outage", async () => {
        if (aborted) return null;
        const start = since();
        log(`fault ${start} ms: SIGKILL the ${name}`);
        const f = await (kind === "pg_failover" ? c.failPostgres() : c.failRedis());
        return { start, f, writableAtMs: since() };
      });
      if (!killed) return;
      const { start, f, writableAtMs } = killed;
      log(`fault ${writableAtMs} ms: ${name} ${f.node} failed over in ${f.failoverMs} ms; starting it again`);
      await c.recover(f);
      injected.push({ kind, target: f.node, targetKind: f.service, atMs: start, endMs: since(), durationMs: f.failoverMs, failover: { ...f, writableAtMs } });
      log(`fault ${since()} ms: ${f.node} is back as ${f.service === "postgres" ? "standby" : "replica"}`);
    });

  const cut = async (durationMs: number): Promise<void> => {
    const c = cluster();
    const start = since();
    log(`fault ${start} ms: cut ${c.cutTarget.label}'s network path to the database for ${durationMs} ms`);
    await c.cut();
    const until = Date.now() + durationMs;
    while (!aborted && Date.now() < until) await sleep(Math.min(100, until - Date.now()));
    await c.restore();
    injected.push({ kind: "db_cut", target: c.cutTarget.label, targetKind: c.cutTarget.kind, atMs: start, endMs: since(), durationMs });
    log(`fault ${since()} ms: ${c.cutTarget.label}'s path to the database is back`);
  };

  const done = (async () => {
    for (const f of schedule) {
      const wait = t0 + f.atMs - Date.now();
      if (wait > 0) await sleep(wait);
      if (aborted) break;
      pending.push(apply(f));
    }
    await Promise.all(pending);
    return injected.sort((a, b) => a.atMs - b.atMs);
  })();
  return {
    done,
    abort() {
      aborted = true;
      for (const m of fleet) if (m.frozen) m.proc.signal("SIGCONT");
    },
  };
}
